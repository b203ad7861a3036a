/*
 * What the Windows leg's Wine answers to GetThreadContext, FOR THE TEST
 * HARNESS ONLY (scripts/ci/test-windows.sh prints its line).
 *
 * CoreCLR walks another thread's stack (DoStackSnapshot, and the GC's
 * redirection of a running thread) only when the thread's context is "safe
 * to redirect": on 64-bit Windows, Thread::IsContextSafeToRedirect
 * (src/coreclr/vm/threads.cpp) asks GetThreadContext for
 * CONTEXT_EXCEPTION_REQUEST and requires CONTEXT_EXCEPTION_REPORTING in the
 * answer (and neither CONTEXT_SERVICE_ACTIVE nor CONTEXT_EXCEPTION_ACTIVE).
 * Windows sets CONTEXT_EXCEPTION_REPORTING whenever it is asked for it
 * (winnt.h's CONTEXT_EXCEPTION_* flags). This program suspends a spinning
 * and a sleeping thread 50 times each, reads their contexts the way the
 * runtime does, and prints how many answers carried the flag.
 */
#include <windows.h>
#include <stdio.h>
#include <string.h>

#ifndef CONTEXT_EXCEPTION_REQUEST
#define CONTEXT_EXCEPTION_ACTIVE 0x08000000L
#define CONTEXT_SERVICE_ACTIVE 0x10000000L
#define CONTEXT_EXCEPTION_REQUEST 0x40000000L
#define CONTEXT_EXCEPTION_REPORTING 0x80000000L
#endif

static volatile LONG64 counter;

static DWORD WINAPI spin(LPVOID unused)
{
    (void)unused;
    for (;;) {
        counter++;
    }
    return 0;
}

static DWORD WINAPI sleeper(LPVOID unused)
{
    (void)unused;
    for (;;) {
        Sleep(1000);
    }
    return 0;
}

int main(void)
{
    HANDLE threads[2] = {
        CreateThread(NULL, 0, spin, NULL, 0, NULL),
        CreateThread(NULL, 0, sleeper, NULL, 0, NULL),
    };
    const char *names[2] = {"spinning", "sleeping"};
    if (threads[0] == NULL || threads[1] == NULL) {
        fprintf(stderr, "context-flags-probe: CreateThread failed (%lu)\n", GetLastError());
        return 1;
    }
    Sleep(100);
    for (int k = 0; k < 2; k++) {
        int read = 0, reporting = 0, active = 0;
        for (int i = 0; i < 50; i++) {
            if (SuspendThread(threads[k]) == (DWORD)-1) {
                continue;
            }
            CONTEXT context;
            memset(&context, 0, sizeof context);
            context.ContextFlags = CONTEXT_CONTROL | CONTEXT_EXCEPTION_REQUEST;
            if (GetThreadContext(threads[k], &context)) {
                read++;
                reporting += (context.ContextFlags & CONTEXT_EXCEPTION_REPORTING) != 0;
                active += (context.ContextFlags & (CONTEXT_SERVICE_ACTIVE | CONTEXT_EXCEPTION_ACTIVE)) != 0;
            }
            ResumeThread(threads[k]);
            Sleep(2);
        }
        printf("%s thread: %d contexts read, %d with CONTEXT_EXCEPTION_REPORTING, %d service or exception active\n",
               names[k], read, reporting, active);
    }
    return 0;
}
