//! IMetaDataDispenser and IMetaDataDispenserEx: opening and creating metadata scopes.
