//! IMetaDataTables and IMetaDataTables2: raw access to the metadata tables.
