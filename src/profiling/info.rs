//! ICorProfilerInfo through ICorProfilerInfo15: the runtime services a profiler calls.
