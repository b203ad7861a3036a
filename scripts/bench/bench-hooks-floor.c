/*
 * The floor of scripts/bench/bench-hooks.sh: a minimal profiler in C whose
 * fast-path ELT hooks do nothing, to compare corprof's do-nothing hooks
 * (tests/fixtures/elt_nothing.rs) against. Written for x86-64 Linux (one calling
 * convention for everything). Like the Rust profiler it asks for
 * COR_PRF_MONITOR_ENTERLEAVE | COR_PRF_DISABLE_INLINING and hooks every
 * function (no mapper: the hooks get FunctionIDs).
 *
 * Two floors, chosen by CORPROF_FLOOR_MODE:
 *   bare   (default) the hooks are empty C functions: an empty function
 *          clobbers no register, so it is a valid fast-path hook as it is;
 *          this is the least any profiler can pay.
 *   saving the hooks are assembly trampolines that save and restore the
 *          same registers as corprof's x86-64 SysV trampolines and call an
 *          empty C function through a pointer: the least a profiler whose
 *          hooks run ordinary compiled code can pay.
 *
 *   gcc -O2 -shared -fPIC -o libfloor.so scripts/bench/bench-hooks-floor.c
 *   CLSID {5A0F3B21-9C4E-4D7A-B12E-6F8D3C5B7A90}
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef int32_t HRESULT;
typedef struct { uint32_t a; uint16_t b, c; uint8_t d[8]; } GUID;
typedef void *(*slot)(void);

#define S_OK 0
#define S_FALSE 1
#define E_NOINTERFACE ((HRESULT)0x80004002)
#define CLASS_E_CLASSNOTAVAILABLE ((HRESULT)0x80040111)
#define EXPORT __attribute__((visibility("default")))

static const GUID CLSID_FLOOR = {0x5A0F3B21, 0x9C4E, 0x4D7A, {0xB1, 0x2E, 0x6F, 0x8D, 0x3C, 0x5B, 0x7A, 0x90}};
static const GUID IID_ICorProfilerInfo3 = {0xB555ED4F, 0x452A, 0x4E54, {0x8B, 0x39, 0xB5, 0x36, 0x0B, 0xAD, 0x32, 0xA0}};

/* vtable slots (IUnknown's three first), from corprof.idl */
enum { QUERY_INTERFACE = 0, RELEASE = 2, SET_EVENT_MASK = 16, SET_ENTER_LEAVE_HOOKS3 = 61 };
#define COR_PRF_MONITOR_ENTERLEAVE 0x1000u
#define COR_PRF_DISABLE_INLINING 0x200000u

/* The hooks: nothing. */
static void enter3(uintptr_t id) { (void)id; }
static void leave3(uintptr_t id) { (void)id; }
static void tailcall3(uintptr_t id) { (void)id; }

/* The "saving" floor: what the trampolines call. */
static void nothing(uintptr_t id) { (void)id; }
__attribute__((used)) static void (*floor_target)(uintptr_t) = nothing;
void floor_enter_saving(void);
void floor_leave_saving(void);

__asm__(
    ".intel_syntax noprefix\n"
    ".text\n"
    ".p2align 4\n"
    ".hidden floor_enter_saving\n"
    ".globl floor_enter_saving\n"
    ".type floor_enter_saving, @function\n"
    "floor_enter_saving:\n"
    "  mov r11, qword ptr [rip + floor_target]\n"
    "  test r11, r11\n"
    "  jz 2f\n"
    "  push rbp\n"
    "  mov rbp, rsp\n"
    "  and rsp, -16\n"
    "  sub rsp, 192\n"
    "  movdqu xmmword ptr [rsp], xmm0\n"
    "  movdqu xmmword ptr [rsp + 16], xmm1\n"
    "  movdqu xmmword ptr [rsp + 32], xmm2\n"
    "  movdqu xmmword ptr [rsp + 48], xmm3\n"
    "  movdqu xmmword ptr [rsp + 64], xmm4\n"
    "  movdqu xmmword ptr [rsp + 80], xmm5\n"
    "  movdqu xmmword ptr [rsp + 96], xmm6\n"
    "  movdqu xmmword ptr [rsp + 112], xmm7\n"
    "  mov qword ptr [rsp + 128], rax\n"
    "  mov qword ptr [rsp + 136], rcx\n"
    "  mov qword ptr [rsp + 144], rdx\n"
    "  mov qword ptr [rsp + 152], rsi\n"
    "  mov qword ptr [rsp + 160], rdi\n"
    "  mov qword ptr [rsp + 168], r8\n"
    "  mov qword ptr [rsp + 176], r9\n"
    "  mov rdi, r14\n"
    "  call r11\n"
    "  movdqu xmm0, xmmword ptr [rsp]\n"
    "  movdqu xmm1, xmmword ptr [rsp + 16]\n"
    "  movdqu xmm2, xmmword ptr [rsp + 32]\n"
    "  movdqu xmm3, xmmword ptr [rsp + 48]\n"
    "  movdqu xmm4, xmmword ptr [rsp + 64]\n"
    "  movdqu xmm5, xmmword ptr [rsp + 80]\n"
    "  movdqu xmm6, xmmword ptr [rsp + 96]\n"
    "  movdqu xmm7, xmmword ptr [rsp + 112]\n"
    "  mov rax, qword ptr [rsp + 128]\n"
    "  mov rcx, qword ptr [rsp + 136]\n"
    "  mov rdx, qword ptr [rsp + 144]\n"
    "  mov rsi, qword ptr [rsp + 152]\n"
    "  mov rdi, qword ptr [rsp + 160]\n"
    "  mov r8, qword ptr [rsp + 168]\n"
    "  mov r9, qword ptr [rsp + 176]\n"
    "  mov rsp, rbp\n"
    "  pop rbp\n"
    "2:\n"
    "  ret\n"
    ".size floor_enter_saving, . - floor_enter_saving\n"
    ".p2align 4\n"
    ".hidden floor_leave_saving\n"
    ".globl floor_leave_saving\n"
    ".type floor_leave_saving, @function\n"
    "floor_leave_saving:\n"
    "  mov r11, qword ptr [rip + floor_target]\n"
    "  test r11, r11\n"
    "  jz 4f\n"
    "  push rbp\n"
    "  mov rbp, rsp\n"
    "  and rsp, -16\n"
    "  sub rsp, 48\n"
    "  movdqu xmmword ptr [rsp], xmm0\n"
    "  movdqu xmmword ptr [rsp + 16], xmm1\n"
    "  mov qword ptr [rsp + 32], rax\n"
    "  mov qword ptr [rsp + 40], rdx\n"
    "  call r11\n"
    "  movdqu xmm0, xmmword ptr [rsp]\n"
    "  movdqu xmm1, xmmword ptr [rsp + 16]\n"
    "  mov rax, qword ptr [rsp + 32]\n"
    "  mov rdx, qword ptr [rsp + 40]\n"
    "  mov rsp, rbp\n"
    "  pop rbp\n"
    "4:\n"
    "  ret\n"
    ".size floor_leave_saving, . - floor_leave_saving\n"
    ".att_syntax\n");

typedef struct { void **vtbl; } object;

static HRESULT query_interface(object *self, const GUID *iid, void **out) {
    (void)iid; /* the runtime asks for IUnknown and ICorProfilerCallback..11: one object answers all */
    *out = self;
    return S_OK;
}
static uint32_t add_ref(object *self) { (void)self; return 2; }
static uint32_t release(object *self) { (void)self; return 1; }
static HRESULT ok(void) { return S_OK; }

static HRESULT initialize(object *self, object *unknown) {
    (void)self;
    object *info = 0;
    HRESULT hr = ((HRESULT(*)(object *, const GUID *, void **))unknown->vtbl[QUERY_INTERFACE])(
        unknown, &IID_ICorProfilerInfo3, (void **)&info);
    if (hr < 0) return hr;
    hr = ((HRESULT(*)(object *, uint32_t))info->vtbl[SET_EVENT_MASK])(
        info, COR_PRF_MONITOR_ENTERLEAVE | COR_PRF_DISABLE_INLINING);
    const char *mode = getenv("CORPROF_FLOOR_MODE");
    int saving = mode != 0 && strcmp(mode, "saving") == 0;
    if (hr >= 0)
        hr = ((HRESULT(*)(object *, void *, void *, void *))info->vtbl[SET_ENTER_LEAVE_HOOKS3])(
            info, saving ? (void *)floor_enter_saving : (void *)enter3,
            saving ? (void *)floor_leave_saving : (void *)leave3,
            saving ? (void *)floor_leave_saving : (void *)tailcall3);
    ((uint32_t(*)(object *))info->vtbl[RELEASE])(info);
    return hr;
}

/* ICorProfilerCallback11 has fewer than 160 slots; every notification
   returns S_OK whatever its arguments. */
static void *callback_vtbl[160];
static object callback = {callback_vtbl};

static HRESULT create_instance(object *self, void *outer, const GUID *iid, void **out) {
    (void)self; (void)outer; (void)iid;
    *out = &callback;
    return S_OK;
}
static void *factory_vtbl[5] = {(void *)query_interface, (void *)add_ref, (void *)release,
                                (void *)create_instance, (void *)ok};
static object factory = {factory_vtbl};

EXPORT HRESULT DllGetClassObject(const GUID *clsid, const GUID *iid, void **out) {
    (void)iid;
    if (memcmp(clsid, &CLSID_FLOOR, sizeof(GUID)) != 0) return CLASS_E_CLASSNOTAVAILABLE;
    for (int i = 0; i < 160; i++) callback_vtbl[i] = (void *)ok;
    callback_vtbl[0] = (void *)query_interface;
    callback_vtbl[1] = (void *)add_ref;
    callback_vtbl[2] = (void *)release;
    callback_vtbl[3] = (void *)initialize;
    *out = &factory;
    return S_OK;
}

EXPORT HRESULT DllCanUnloadNow(void) { return S_FALSE; }
