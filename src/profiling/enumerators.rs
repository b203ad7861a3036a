//! The ICorProfiler*Enum interfaces: enumerators over objects, functions, modules, threads and methods.
