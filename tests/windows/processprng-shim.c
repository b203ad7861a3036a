/*
 * bcryptprimitives.dll for Wine 8, FOR THE TEST HARNESS ONLY.
 *
 * Rust's std (1.78 and later) imports ProcessPrng from bcryptprimitives.dll,
 * which every supported Windows has and Wine 8 does not: without this shim a
 * Rust DLL or test executable built for x86_64-pc-windows-gnu fails to load
 * under Wine. scripts/ci/test-windows.sh builds it with mingw-w64 and puts it
 * next to the test executables and the profiler DLLs it runs. It is never
 * part of what corprof's users build: on Windows the real DLL is used.
 *
 * ProcessPrng(PBYTE, SIZE_T) -> BOOL always returns TRUE (Microsoft's
 * documentation); here it forwards to advapi32's SystemFunction036
 * (RtlGenRandom), in chunks that fit its ULONG length.
 */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length)
{
    while (length > 0) {
        ULONG chunk = length > 0x40000000 ? 0x40000000 : (ULONG)length;
        if (!SystemFunction036(data, chunk)) {
            return FALSE;
        }
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}
