//! The per-module cache's data: ModuleID -> metadata importer (or "not
//! cached") and the kept emitters, shared by a [`ProfilerInfo`](crate::facade::ProfilerInfo)
//! and its clones. What goes in and why it stays correct is the naming
//! room's (`naming/cache.rs`), which fills it through the runtime; this
//! room only holds it, below `info`, which owns it.

use alloc::collections::BTreeMap;
use alloc::sync::Arc;
use std::sync::RwLock;

use super::emit::MetadataEmit;
use super::metadata::MetadataImport;
use crate::profiling::ModuleID;
use crate::support::sync::{read, write};

/// ModuleID -> its importer (`None`: not cached, see the module docs), and
/// the emitters of the permanent modules that were opened for writing (so
/// that what a [`MetadataEmit`] learnt of a scope outlives each use).
#[derive(Default)]
pub(crate) struct ModuleCache {
    modules: RwLock<BTreeMap<ModuleID, Option<MetadataImport>>>,
    emitters: RwLock<BTreeMap<ModuleID, MetadataEmit>>,
}

/// Shared by a `ProfilerInfo` and its clones.
pub(crate) type SharedModuleCache = Arc<ModuleCache>;

impl ModuleCache {
    pub(crate) fn get(&self, module: ModuleID) -> Option<Option<MetadataImport>> {
        let modules = read(&self.modules);
        modules.get(&module).cloned()
    }

    pub(crate) fn insert(&self, module: ModuleID, import: Option<MetadataImport>) {
        let mut modules = write(&self.modules);
        modules.insert(module, import);
    }

    pub(crate) fn remove(&self, module: ModuleID) {
        let mut modules = write(&self.modules);
        modules.remove(&module);
        drop(modules);
        let mut emitters = write(&self.emitters);
        emitters.remove(&module);
    }

    /// The kept emitter of `module`, if any.
    pub(crate) fn emitter(&self, module: ModuleID) -> Option<MetadataEmit> {
        read(&self.emitters).get(&module).cloned()
    }

    /// Keeps `emit` as the emitter of `module` (the first one kept stays).
    pub(crate) fn keep_emitter(&self, module: ModuleID, emit: &MetadataEmit) {
        write(&self.emitters)
            .entry(module)
            .or_insert_with(|| emit.clone());
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.modules.read().unwrap().len()
    }
}
