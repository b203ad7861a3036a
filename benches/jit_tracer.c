/*
 * The baseline of `scripts/bench/bench-runtime.sh`: a JIT tracer written the plain
 * way in C, against which examples/jit_tracer.rs is measured. It is not crate
 * code and shares nothing with it: its few COM declarations are transcribed
 * here from the runtime's corprof.idl and cor.h (slot numbers are the
 * position of each method in the vtable, IUnknown's three included).
 *
 * For every JITCompilationStarted it calls GetFunctionInfo,
 * GetModuleMetaData (IMetaDataImport), GetMethodProps and GetTypeDefProps
 * into fixed 512-character buffers (a second call with a heap buffer only
 * for a longer name), GetNestedClassProps for nested types, converts
 * UTF-16 to UTF-8 and writes one line per method to a buffered file, the
 * same lines as examples/jit_tracer.rs:
 *
 *   initialize: ICorProfilerInfo<N>
 *   jit: Namespace.Outer+Inner.Method
 *   shutdown
 *
 * Build: cc -O2 -shared -fPIC -o libjit_tracer_c.so benches/jit_tracer.c
 * Load it with CORECLR_PROFILER={8C2E3B0A-5D1F-4E7A-9B6C-3F1A2D4E5B60};
 * the output file is JIT_TRACER_OUTPUT (stderr without it).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int32_t HRESULT;
typedef uint32_t ULONG;
typedef uint32_t DWORD;
typedef uint16_t WCHAR;
typedef uint32_t mdToken;
typedef uintptr_t ID;

typedef struct {
    uint32_t d1;
    uint16_t d2, d3;
    uint8_t d4[8];
} GUID;

#define S_OK ((HRESULT)0)
#define E_NOINTERFACE ((HRESULT)0x80004002)
#define CLASS_E_CLASSNOTAVAILABLE ((HRESULT)0x80040111)
#define FAILED(hr) ((hr) < 0)

/* corprof.idl: COR_PRF_MONITOR_JIT_COMPILATION. */
#define COR_PRF_MONITOR_JIT_COMPILATION 0x20
/* cor.h: CorTypeAttr visibility; nested types are tdNestedPublic (2) to
 * tdNestedFamORAssem (7). */
#define tdVisibilityMask 0x7
#define tdNestedPublic 0x2

/* Vtable slots (corprof.idl, cor.h). */
enum {
    SLOT_QUERY_INTERFACE = 0, SLOT_ADD_REF = 1, SLOT_RELEASE = 2,
    /* ICorProfilerInfo */
    INFO_GET_FUNCTION_INFO = 15, INFO_SET_EVENT_MASK = 16, INFO_GET_MODULE_METADATA = 21,
    /* IMetaDataImport */
    IMPORT_GET_TYPE_DEF_PROPS = 12, IMPORT_GET_METHOD_PROPS = 30, IMPORT_GET_NESTED_CLASS_PROPS = 62,
    /* ICorProfilerCallback, ICorProfilerCallback2 */
    CALLBACK_INITIALIZE = 3, CALLBACK_SHUTDOWN = 4, CALLBACK_JIT_COMPILATION_STARTED = 23,
    CALLBACK2_SLOTS = 80,
};

typedef struct { void **vtbl; } Com;
#define SLOT(obj, n, type) ((type)(((Com *)(obj))->vtbl[n]))

typedef HRESULT (*QueryInterfaceFn)(void *, const GUID *, void **);
typedef ULONG (*ReleaseFn)(void *);
typedef HRESULT (*GetFunctionInfoFn)(void *, ID, ID *, ID *, mdToken *);
typedef HRESULT (*SetEventMaskFn)(void *, DWORD);
typedef HRESULT (*GetModuleMetaDataFn)(void *, ID, DWORD, const GUID *, void **);
typedef HRESULT (*GetTypeDefPropsFn)(void *, mdToken, WCHAR *, ULONG, ULONG *, DWORD *, mdToken *);
typedef HRESULT (*GetMethodPropsFn)(void *, mdToken, mdToken *, WCHAR *, ULONG, ULONG *, DWORD *,
                                    const uint8_t **, ULONG *, ULONG *, DWORD *);
typedef HRESULT (*GetNestedClassPropsFn)(void *, mdToken, mdToken *);

static const GUID IID_IUnknown = {0x00000000, 0x0000, 0x0000, {0xC0, 0, 0, 0, 0, 0, 0, 0x46}};
static const GUID IID_IClassFactory = {0x00000001, 0x0000, 0x0000, {0xC0, 0, 0, 0, 0, 0, 0, 0x46}};
static const GUID IID_ICorProfilerCallback = {0x176FBED1, 0xA55C, 0x4796, {0x98, 0xCA, 0xA9, 0xDA, 0x0E, 0xF8, 0x83, 0xE7}};
static const GUID IID_ICorProfilerCallback2 = {0x8A8CC829, 0xCCF2, 0x49fe, {0xBB, 0xAE, 0x0F, 0x02, 0x22, 0x28, 0x07, 0x1A}};
static const GUID IID_IMetaDataImport = {0x7DAC8207, 0xD3AE, 0x4C75, {0x9B, 0x67, 0x92, 0x80, 0x1A, 0x49, 0x7D, 0x44}};
static const GUID CLSID_CTracer = {0x8C2E3B0A, 0x5D1F, 0x4E7A, {0x9B, 0x6C, 0x3F, 0x1A, 0x2D, 0x4E, 0x5B, 0x60}};
/* ICorProfilerInfo15 down to ICorProfilerInfo (index 0 = version 15). */
static const GUID IID_INFO[15] = {
    {0xB446462D, 0xBD22, 0x41DD, {0x87, 0x2D, 0xDC, 0x71, 0x4C, 0x49, 0xEB, 0x56}},
    {0xF460E352, 0xD76D, 0x4FE9, {0x83, 0x5F, 0xF6, 0xAF, 0x9D, 0x6E, 0x86, 0x2D}},
    {0x6E6C7EE2, 0x0701, 0x4EC2, {0x9D, 0x29, 0x2E, 0x87, 0x33, 0xB6, 0x69, 0x34}},
    {0x27b24ccd, 0x1cb1, 0x47c5, {0x96, 0xee, 0x98, 0x19, 0x0d, 0xc3, 0x09, 0x59}},
    {0x06398876, 0x8987, 0x4154, {0xB6, 0x21, 0x40, 0xA0, 0x0D, 0x6E, 0x4D, 0x04}},
    {0x2F1B5152, 0xC869, 0x40C9, {0xAA, 0x5F, 0x3A, 0xBE, 0x02, 0x6B, 0xD7, 0x20}},
    {0x008170DB, 0xF8CC, 0x4796, {0x9A, 0x51, 0xDC, 0x8A, 0xA0, 0xB4, 0x70, 0x12}},
    {0xC5AC80A6, 0x782E, 0x4716, {0x80, 0x44, 0x39, 0x59, 0x8C, 0x60, 0xCF, 0xBF}},
    {0x9AEECC0D, 0x63E0, 0x4187, {0x8C, 0x00, 0xE3, 0x12, 0xF5, 0x03, 0xF6, 0x63}},
    {0xF30A070D, 0xBFFB, 0x46A7, {0xB1, 0xD8, 0x87, 0x81, 0xEF, 0x7B, 0x69, 0x8A}},
    {0x07602928, 0xCE38, 0x4B83, {0x81, 0xE7, 0x74, 0xAD, 0xAF, 0x78, 0x12, 0x14}},
    {0x0d8fdcaa, 0x6257, 0x47bf, {0xb1, 0xbf, 0x94, 0xda, 0xc8, 0x84, 0x66, 0xee}},
    {0xB555ED4F, 0x452A, 0x4E54, {0x8B, 0x39, 0xB5, 0x36, 0x0B, 0xAD, 0x32, 0xA0}},
    {0xCC0935CD, 0xA518, 0x487d, {0xB0, 0xBB, 0xA9, 0x32, 0x14, 0xE6, 0x54, 0x78}},
    {0x28B5557D, 0x3F3F, 0x48b4, {0x90, 0xB2, 0x5F, 0x9E, 0xEA, 0x2F, 0x6C, 0x48}},
};

static int same(const GUID *a, const GUID *b) { return memcmp(a, b, sizeof(GUID)) == 0; }

/* ------------------------------------------------------------------ state */

static void *info;  /* the highest ICorProfilerInfo the runtime answered */
static FILE *out;

/* ------------------------------------------------------------------ names */

#define CHARS 512

/* A growable UTF-8 line. */
typedef struct { char *p; size_t len, cap; char inline_[1024]; } Line;

static void reserve(Line *l, size_t n);
static void put(Line *l, const char *s, size_t n) {
    reserve(l, n);
    memcpy(l->p + l->len, s, n);
    l->len += n;
}

/* Room for n more bytes. */
static void reserve(Line *l, size_t n) {
    if (l->len + n <= l->cap) return;
    size_t cap = (l->len + n) * 2;
    char *p = malloc(cap);
    if (!p) abort();
    memcpy(p, l->p, l->len);
    if (l->p != l->inline_) free(l->p);
    l->p = p;
    l->cap = cap;
}

/* UTF-16 (up to a NUL or n units) to UTF-8, written straight into the line
 * (at most 3 bytes per unit); lone surrogates become U+FFFD. */
__attribute__((noinline)) static void put_utf16(Line *l, const WCHAR *s, size_t n) {
    reserve(l, 3 * n);
    unsigned char *o = (unsigned char *)l->p + l->len;
    for (size_t i = 0; i < n && s[i] != 0; i++) {
        uint32_t c = s[i];
        if (c < 0x80) { *o++ = (unsigned char)c; continue; }
        if (c >= 0xD800 && c < 0xDC00 && i + 1 < n && s[i + 1] >= 0xDC00 && s[i + 1] < 0xE000) {
            c = 0x10000 + ((c - 0xD800) << 10) + (s[i + 1] - 0xDC00);
            i++;
        } else if (c >= 0xD800 && c < 0xE000) {
            c = 0xFFFD;
        }
        if (c < 0x800) { *o++ = 0xC0 | (c >> 6); *o++ = 0x80 | (c & 0x3F); }
        else if (c < 0x10000) { *o++ = 0xE0 | (c >> 12); *o++ = 0x80 | ((c >> 6) & 0x3F); *o++ = 0x80 | (c & 0x3F); }
        else { *o++ = 0xF0 | (c >> 18); *o++ = 0x80 | ((c >> 12) & 0x3F); *o++ = 0x80 | ((c >> 6) & 0x3F); *o++ = 0x80 | (c & 0x3F); }
    }
    l->len = (size_t)(o - (unsigned char *)l->p);
}

/* GetTypeDefProps into a 512-character buffer, again with the exact size
 * when the name is longer; appends the name. */
static HRESULT put_type_def(Line *l, void *import, mdToken td, DWORD *flags) {
    WCHAR name[CHARS];
    ULONG needed = 0;
    mdToken extends;
    HRESULT hr = SLOT(import, IMPORT_GET_TYPE_DEF_PROPS, GetTypeDefPropsFn)(import, td, name, CHARS, &needed, flags, &extends);
    if (FAILED(hr)) return hr;
    if (needed <= CHARS) { put_utf16(l, name, needed); return S_OK; }
    WCHAR *big = malloc(needed * sizeof(WCHAR));
    if (!big) abort();
    hr = SLOT(import, IMPORT_GET_TYPE_DEF_PROPS, GetTypeDefPropsFn)(import, td, big, needed, &needed, flags, &extends);
    if (!FAILED(hr)) put_utf16(l, big, needed);
    free(big);
    return hr;
}

/* The declaring type's full name: enclosing types first, joined with '+'
 * (at most 32 levels up, like the crate). Each name is read once, with its
 * flags; nesting is asked for only when the flags say the type is nested. */
static HRESULT put_type_name(Line *l, void *import, mdToken td) {
    Line names[33];
    int n = 0;
    HRESULT hr = S_OK;
    DWORD flags = 0;
    for (;;) {
        Line *name = &names[n++];
        memset(name, 0, sizeof *name - sizeof name->inline_);
        name->p = name->inline_;
        name->cap = sizeof name->inline_;
        hr = put_type_def(name, import, td, &flags);
        if (FAILED(hr) || n == 33 || (flags & tdVisibilityMask) < tdNestedPublic) break;
        mdToken outer = 0;
        if (FAILED(SLOT(import, IMPORT_GET_NESTED_CLASS_PROPS, GetNestedClassPropsFn)(import, td, &outer))
            || (outer & 0x00FFFFFF) == 0)
            break;
        td = outer;
    }
    for (int i = n - 1; i >= 0; i--) {
        if (!FAILED(hr)) {
            put(l, names[i].p, names[i].len);
            if (i > 0) put(l, "+", 1);
        }
        if (names[i].p != names[i].inline_) free(names[i].p);
    }
    return hr;
}

static HRESULT put_function_name(Line *l, ID function) {
    ID class_id = 0, module = 0;
    mdToken token = 0;
    HRESULT hr = SLOT(info, INFO_GET_FUNCTION_INFO, GetFunctionInfoFn)(info, function, &class_id, &module, &token);
    if (FAILED(hr)) return hr;
    void *import = NULL;
    hr = SLOT(info, INFO_GET_MODULE_METADATA, GetModuleMetaDataFn)(info, module, 0, &IID_IMetaDataImport, &import);
    if (FAILED(hr)) return hr;
    if (!import) return (HRESULT)0x80004003; /* E_POINTER */
    WCHAR name[CHARS];
    WCHAR *method = name;
    ULONG needed = 0, sig_len, rva;
    DWORD attr, impl;
    const uint8_t *sig;
    mdToken td = 0;
    hr = SLOT(import, IMPORT_GET_METHOD_PROPS, GetMethodPropsFn)(import, token, &td, name, CHARS, &needed, &attr, &sig, &sig_len, &rva, &impl);
    if (!FAILED(hr) && needed > CHARS) {
        method = malloc(needed * sizeof(WCHAR));
        if (!method) abort();
        hr = SLOT(import, IMPORT_GET_METHOD_PROPS, GetMethodPropsFn)(import, token, &td, method, needed, &needed, &attr, &sig, &sig_len, &rva, &impl);
    }
    if (!FAILED(hr) && (td & 0x00FFFFFF) != 0) {
        hr = put_type_name(l, import, td);
        put(l, ".", 1);
    }
    if (!FAILED(hr)) put_utf16(l, method, needed);
    if (method != name) free(method);
    SLOT(import, SLOT_RELEASE, ReleaseFn)(import);
    return hr;
}

/* ------------------------------------------------------- the callback object */

static void *callback_vtbl[CALLBACK2_SLOTS];
static Com callback = {callback_vtbl};

static HRESULT callback_query_interface(void *self, const GUID *iid, void **out) {
    if (same(iid, &IID_IUnknown) || same(iid, &IID_ICorProfilerCallback) || same(iid, &IID_ICorProfilerCallback2)) {
        *out = self;
        return S_OK;
    }
    *out = NULL;
    return E_NOINTERFACE;
}
static ULONG static_add_ref(void *self) { (void)self; return 2; }
static ULONG static_release(void *self) { (void)self; return 1; }
/* Every callback the tracer does not subscribe to: S_OK, whatever its
 * arguments (the caller cleans the stack on x86-64). */
static HRESULT callback_ignore(void *self) { (void)self; return S_OK; }

static HRESULT callback_initialize(void *self, void *unknown) {
    (void)self;
    int version = 0;
    for (int i = 0; i < 15 && !info; i++) {
        if (SLOT(unknown, SLOT_QUERY_INTERFACE, QueryInterfaceFn)(unknown, &IID_INFO[i], &info) == S_OK && info)
            version = 15 - i;
    }
    if (!info) return E_NOINTERFACE;
    const char *path = getenv("JIT_TRACER_OUTPUT");
    out = path ? fopen(path, "w") : NULL;
    if (!out) out = stderr;
    setvbuf(out, NULL, _IOFBF, 1 << 16);
    HRESULT hr = SLOT(info, INFO_SET_EVENT_MASK, SetEventMaskFn)(info, COR_PRF_MONITOR_JIT_COMPILATION);
    if (FAILED(hr)) return hr;
    fprintf(out, "initialize: ICorProfilerInfo%d\n", version);
    return S_OK;
}

static HRESULT callback_jit_compilation_started(void *self, ID function, int safe_to_block) {
    (void)self; (void)safe_to_block;
    Line l = {0};
    l.p = l.inline_;
    l.cap = sizeof l.inline_;
    put(&l, "jit: ", 5);
    HRESULT hr = put_function_name(&l, function);
    if (FAILED(hr)) {
        char text[96];
        int n = snprintf(text, sizeof text, "jit: FunctionID(0x%zx) (no name: 0x%08X)", (size_t)function, (unsigned)hr);
        l.len = 0;
        put(&l, text, (size_t)n);
    }
    put(&l, "\n", 1);
    fwrite(l.p, 1, l.len, out); /* stdio's lock keeps lines whole */
    if (l.p != l.inline_) free(l.p);
    return S_OK;
}

static HRESULT callback_shutdown(void *self) {
    (void)self;
    fputs("shutdown\n", out);
    fflush(out);
    return S_OK;
}

/* --------------------------------------------------------- the class factory */

typedef HRESULT (*CreateInstanceFn)(void *, void *, const GUID *, void **);
static HRESULT factory_query_interface(void *self, const GUID *iid, void **out) {
    if (same(iid, &IID_IUnknown) || same(iid, &IID_IClassFactory)) { *out = self; return S_OK; }
    *out = NULL;
    return E_NOINTERFACE;
}
static HRESULT factory_create_instance(void *self, void *outer, const GUID *iid, void **out) {
    (void)self; (void)outer;
    for (int i = 0; i < CALLBACK2_SLOTS; i++) callback_vtbl[i] = (void *)callback_ignore;
    callback_vtbl[SLOT_QUERY_INTERFACE] = (void *)callback_query_interface;
    callback_vtbl[SLOT_ADD_REF] = (void *)static_add_ref;
    callback_vtbl[SLOT_RELEASE] = (void *)static_release;
    callback_vtbl[CALLBACK_INITIALIZE] = (void *)callback_initialize;
    callback_vtbl[CALLBACK_SHUTDOWN] = (void *)callback_shutdown;
    callback_vtbl[CALLBACK_JIT_COMPILATION_STARTED] = (void *)callback_jit_compilation_started;
    return callback_query_interface(&callback, iid, out);
}
static HRESULT factory_lock_server(void *self, int lock) { (void)self; (void)lock; return S_OK; }
static void *factory_vtbl[5] = {
    (void *)factory_query_interface, (void *)static_add_ref, (void *)static_release,
    (void *)factory_create_instance, (void *)factory_lock_server,
};
static Com factory = {factory_vtbl};

__attribute__((visibility("default"))) HRESULT DllGetClassObject(const GUID *clsid, const GUID *iid, void **out) {
    if (!same(clsid, &CLSID_CTracer)) { *out = NULL; return CLASS_E_CLASSNOTAVAILABLE; }
    return factory_query_interface(&factory, iid, out);
}

__attribute__((visibility("default"))) HRESULT DllCanUnloadNow(void) { return (HRESULT)1; /* S_FALSE */ }
