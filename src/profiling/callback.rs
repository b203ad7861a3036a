//! ICorProfilerCallback through ICorProfilerCallback11: the notifications a profiler implements.
