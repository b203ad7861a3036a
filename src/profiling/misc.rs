//! IMethodMalloc, ICorProfilerFunctionControl and ICorProfilerAssemblyReferenceProvider.
