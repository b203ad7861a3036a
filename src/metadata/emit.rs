//! IMetaDataEmit and IMetaDataEmit2: writing a module's metadata.
