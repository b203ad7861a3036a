//! IMetaDataAssemblyImport and IMetaDataAssemblyEmit: assembly manifests.
