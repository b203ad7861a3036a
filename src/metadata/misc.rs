//! IMetaDataInfo, IMetaDataFilter, IMetaDataValidate, IMetaDataError, IMapToken and IHostFilter.
