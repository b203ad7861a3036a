//! IMetaDataImport and IMetaDataImport2: reading a module's metadata.
