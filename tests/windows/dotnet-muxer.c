/*
 * dotnet.exe for the Windows leg, FOR THE TEST HARNESS ONLY.
 *
 * NuGet serves Microsoft's Windows x64 runtime pack (coreclr.dll, the
 * libraries, hostfxr.dll, hostpolicy.dll) but no dotnet.exe, which ships only
 * in the SDK and runtime installers. The muxer's work (`exec`,
 * `--runtimeconfig`, `--list-runtimes`, resolving the framework) is done by
 * hostfxr.dll: the executable itself only finds hostfxr in its own
 * directory's host\fxr\<version>\ and hands it the command line through
 * hostfxr_main_startupinfo (hostfxr.h in Microsoft.NETCore.App.Host.win-x64:
 * argc, argv, host_path, dotnet_root, app_path). hostfxr runs as the muxer
 * when app_path names no file (fx_muxer.cpp's detect_operating_mode: an
 * existing app_path means an apphost), so app_path is dotnet.dll beside
 * this executable, which is never laid out. This program does that, with the one fxr version
 * scripts/ci/test-windows.sh lays out, named at build time (FXR_VERSION), so
 * that every program the harness starts (`wine dotnet.exe exec
 * --runtimeconfig X.runtimeconfig.json X.dll`) goes through Microsoft's own
 * hostfxr, hostpolicy and coreclr. It is never part of what corprof's users
 * build or run.
 */
#include <windows.h>
#include <stdio.h>
#include <wchar.h>

#ifndef FXR_VERSION
#error "build with -DFXR_VERSION=L\"10.0.15\" (scripts/ci/test-windows.sh)"
#endif

typedef int (__cdecl *hostfxr_main_startupinfo_fn)(const int argc, const wchar_t **argv,
                                                   const wchar_t *host_path,
                                                   const wchar_t *dotnet_root,
                                                   const wchar_t *app_path);

int wmain(int argc, const wchar_t **argv)
{
    wchar_t host_path[MAX_PATH];
    DWORD n = GetModuleFileNameW(NULL, host_path, MAX_PATH);
    if (n == 0 || n >= MAX_PATH) {
        fwprintf(stderr, L"dotnet-muxer: cannot read this executable's path\n");
        return 0x80008083; /* the hosts' own "cannot get the executable's path" */
    }
    wchar_t root[MAX_PATH];
    wcscpy(root, host_path);
    wchar_t *slash = wcsrchr(root, L'\\');
    if (slash == NULL) {
        fwprintf(stderr, L"dotnet-muxer: no directory in %ls\n", host_path);
        return 0x80008083;
    }
    *slash = 0;
    wchar_t fxr[MAX_PATH];
    if (_snwprintf(fxr, MAX_PATH, L"%ls\\host\\fxr\\%ls\\hostfxr.dll", root, FXR_VERSION) < 0) {
        fwprintf(stderr, L"dotnet-muxer: path too long under %ls\n", root);
        return 0x80008083;
    }
    HMODULE lib = LoadLibraryW(fxr);
    if (lib == NULL) {
        fwprintf(stderr, L"dotnet-muxer: cannot load %ls (error %lu)\n", fxr, GetLastError());
        return 0x80008083;
    }
    hostfxr_main_startupinfo_fn main_fn =
        (hostfxr_main_startupinfo_fn)(void (*)(void))GetProcAddress(lib, "hostfxr_main_startupinfo");
    if (main_fn == NULL) {
        fwprintf(stderr, L"dotnet-muxer: %ls exports no hostfxr_main_startupinfo\n", fxr);
        return 0x80008083;
    }
    wchar_t app_path[MAX_PATH];
    if (_snwprintf(app_path, MAX_PATH, L"%ls\\dotnet.dll", root) < 0) {
        fwprintf(stderr, L"dotnet-muxer: path too long under %ls\n", root);
        return 0x80008083;
    }
    return main_fn(argc, argv, host_path, root, app_path);
}
