/* A C caller of a Rust object exported with two unrelated interfaces
 * (tests/com_c_caller.rs: export_multi::<(IGreeter2, IStore), _>), through
 * the vtables only, as native code sees it. It checks COM's QueryInterface
 * rules (identity, reflexivity, symmetry, transitivity, E_NOINTERFACE with a
 * null out pointer), the counts AddRef and Release return, and that every
 * interface reaches the same object; it releases every reference it holds,
 * the given one last.
 *
 *   int corprof_c_caller(void *greeter2, char *why, size_t len);
 *
 * Returns 0, or the line of the first failed check with its text in `why`.
 * The layouts and IIDs are those the test declares with com_interface!. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef int32_t HRESULT;
typedef struct {
    uint32_t Data1;
    uint16_t Data2, Data3;
    uint8_t Data4[8];
} GUID;

#define S_OK ((HRESULT)0)
#define E_NOINTERFACE ((HRESULT)0x80004002)

typedef struct IUnknownVtbl {
    HRESULT (*QueryInterface)(void *self, const GUID *iid, void **out);
    uint32_t (*AddRef)(void *self);
    uint32_t (*Release)(void *self);
} IUnknownVtbl;

typedef struct IGreeter2Vtbl {
    IUnknownVtbl base;
    HRESULT (*Greet)(void *self, const uint16_t *name, int32_t *out); /* IGreeter */
    uint32_t (*Count)(void *self);                                    /* IGreeter */
    uint32_t (*Bump)(void *self);                                     /* IGreeter2 */
} IGreeter2Vtbl;

typedef struct IStoreVtbl {
    IUnknownVtbl base;
    HRESULT (*Put)(void *self, uint32_t value);
    HRESULT (*Get)(void *self, uint32_t *out);
} IStoreVtbl;

static const GUID IID_IUnknown = {0x00000000, 0x0000, 0x0000, {0xC0, 0, 0, 0, 0, 0, 0, 0x46}};
static const GUID IID_IGreeter = {0x6A0D5C61, 0x0001, 0x4000, {0x80, 0, 0, 0, 0, 0, 0, 0x01}};
static const GUID IID_IGreeter2 = {0x6A0D5C61, 0x0001, 0x4000, {0x80, 0, 0, 0, 0, 0, 0, 0x02}};
static const GUID IID_IStore = {0x6A0D5C61, 0x0001, 0x4000, {0x80, 0, 0, 0, 0, 0, 0, 0x03}};
static const GUID IID_INone = {0x6A0D5C61, 0x0001, 0x4000, {0x80, 0, 0, 0, 0, 0, 0, 0xFF}};

#define VT(p) (*(const IUnknownVtbl *const *)(p))
#define GREETER(p) (*(const IGreeter2Vtbl *const *)(p))
#define STORE(p) (*(const IStoreVtbl *const *)(p))

#define CHECK(cond)                                                          \
    do {                                                                     \
        if (!(cond)) {                                                       \
            snprintf(why, len, "%s (line %d)", #cond, __LINE__);             \
            return __LINE__;                                                 \
        }                                                                    \
    } while (0)

/* QueryInterface through slot 0; `out` starts non-null so that a failure is
 * seen to clear it. */
static HRESULT query(void *self, const GUID *iid, void **out) {
    *out = (void *)1;
    return VT(self)->QueryInterface(self, iid, out);
}

int corprof_c_caller(void *greeter2, char *why, size_t len) {
    const GUID *iids[4] = {&IID_IUnknown, &IID_IGreeter, &IID_IGreeter2, &IID_IStore};
    void *unknown, *greeter, *store, *again, *none, *back, *other;
    int i, j, k;

    /* One reference, given by the caller. */
    CHECK(VT(greeter2)->AddRef(greeter2) == 2);
    CHECK(VT(greeter2)->Release(greeter2) == 1);

    CHECK(query(greeter2, &IID_IUnknown, &unknown) == S_OK);
    CHECK(query(greeter2, &IID_IGreeter, &greeter) == S_OK);
    CHECK(query(greeter2, &IID_IStore, &store) == S_OK);
    CHECK(VT(greeter2)->AddRef(greeter2) == 5); /* one count for the object */
    CHECK(VT(store)->Release(store) == 4);      /* released through another interface */
    CHECK(VT(store)->AddRef(store) == 5);
    CHECK(VT(greeter2)->Release(greeter2) == 4);

    /* The second chain has its own vtable pointer; the first chain's
     * interfaces share one. */
    CHECK(store != greeter2);
    CHECK(greeter == greeter2);

    /* Identity: one IUnknown pointer, from every interface. */
    {
        void *from[3] = {greeter2, greeter, store};
        for (i = 0; i < 3; i++) {
            CHECK(query(from[i], &IID_IUnknown, &again) == S_OK);
            CHECK(again == unknown);
            CHECK(VT(again)->Release(again) == 4);
        }
    }

    /* Reflexive, symmetric, transitive: every IID from every pointer, and
     * back, and on to every other IID. */
    for (i = 0; i < 4; i++) {
        void *a;
        CHECK(query(unknown, iids[i], &a) == S_OK);
        CHECK(query(a, iids[i], &again) == S_OK); /* reflexive */
        CHECK(again == a);
        CHECK(VT(again)->Release(again) == 5);
        for (j = 0; j < 4; j++) {
            CHECK(query(a, iids[j], &other) == S_OK);
            CHECK(query(other, iids[i], &back) == S_OK); /* symmetric */
            CHECK(back == a);
            CHECK(VT(back)->Release(back) == 6);
            for (k = 0; k < 4; k++) {
                void *c, *direct;
                CHECK(query(other, iids[k], &c) == S_OK);
                CHECK(query(a, iids[k], &direct) == S_OK); /* transitive */
                CHECK(c == direct);
                CHECK(VT(direct)->Release(direct) == 7);
                CHECK(VT(c)->Release(c) == 6);
            }
            CHECK(VT(other)->Release(other) == 5);
        }
        CHECK(VT(a)->Release(a) == 4);
    }

    /* E_NOINTERFACE with a null out pointer, from every interface, and no
     * reference taken. */
    {
        void *from[4] = {unknown, greeter, greeter2, store};
        for (i = 0; i < 4; i++) {
            CHECK(query(from[i], &IID_INone, &none) == E_NOINTERFACE);
            CHECK(none == NULL);
        }
        CHECK(VT(unknown)->AddRef(unknown) == 5);
        CHECK(VT(unknown)->Release(unknown) == 4);
    }

    /* The methods of both chains reach one object. */
    {
        static const uint16_t name[] = {'A', 'd', 'a', 0};
        int32_t greeted = -1;
        uint32_t stored = 0;
        CHECK(GREETER(greeter2)->Greet(greeter2, name, &greeted) == S_OK);
        CHECK(greeted == 3);
        CHECK(GREETER(greeter)->Count(greeter) == 1);
        CHECK(GREETER(greeter2)->Bump(greeter2) == 2);
        CHECK(STORE(store)->Get(store, &stored) == S_OK);
        CHECK(stored == 2); /* IStore sees IGreeter2's count */
        CHECK(STORE(store)->Put(store, 40) == S_OK);
        CHECK(GREETER(greeter)->Count(greeter) == 40);
    }

    /* Every reference released, the caller's last: 0 then, and the object
     * is gone. */
    CHECK(VT(store)->Release(store) == 3);
    CHECK(VT(greeter)->Release(greeter) == 2);
    CHECK(VT(unknown)->Release(unknown) == 1);
    CHECK(VT(greeter2)->Release(greeter2) == 0);
    return 0;
}

/* The canary of scripts/ci/check-sanitizer.sh: releases the last reference
 * of `unknown` (the object is freed) and then reads its vtable pointer, a
 * heap use after free in this file's own code, which AddressSanitizer
 * reports only if this file is instrumented and reaches the runtime. */
void *corprof_c_read_after_release(void *unknown) {
    void *const *volatile object = (void *const *)unknown;
    VT(unknown)->Release(unknown);
    return *object;
}
