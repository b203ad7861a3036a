/*
 * The `dotnet` muxer of the AArch64 leg (scripts/test-aarch64.sh), built
 * with aarch64-linux-gnu-gcc and run under qemu-aarch64: NuGet serves the
 * linux-arm64 runtime pack (libhostfxr.so, the runtime) and the host pack
 * (apphost), but no arm64 `dotnet` executable. Like the real muxer, it loads
 * host/fxr/<version>/libhostfxr.so from the directory it sits in (the
 * DOTNET_ROOT; the leg lays out exactly one version there) and hands it the
 * command line
 * (`hostfxr_main(argc, argv)`, hostfxr.h of dotnet/runtime's native hosting
 * API), which runs `dotnet exec --runtimeconfig X.runtimeconfig.json X.dll`
 * as the x64 host does. For the tests only.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

typedef int (*hostfxr_main_fn)(int argc, const char **argv);

int main(int argc, const char **argv) {
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) {
        fprintf(stderr, "dotnet-muxer: cannot read /proc/self/exe\n");
        return 140;
    }
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    if (slash == NULL) {
        return 140;
    }
    *slash = '\0';
    char fxr_dir[PATH_MAX + 16];
    if ((size_t)snprintf(fxr_dir, sizeof fxr_dir, "%s/host/fxr", self) >= sizeof fxr_dir) {
        return 140;
    }
    DIR *dir = opendir(fxr_dir);
    if (dir == NULL) {
        fprintf(stderr, "dotnet-muxer: no %s\n", fxr_dir);
        return 140;
    }
    char version[256] = "";
    struct dirent *e;
    int found = 0;
    while ((e = readdir(dir)) != NULL) {
        if (e->d_name[0] == '.') {
            continue;
        }
        if (found) {
            fprintf(stderr, "dotnet-muxer: more than one version in %s\n", fxr_dir);
            closedir(dir);
            return 140;
        }
        snprintf(version, sizeof version, "%s", e->d_name);
        found = 1;
    }
    closedir(dir);
    if (!found) {
        fprintf(stderr, "dotnet-muxer: no version in %s\n", fxr_dir);
        return 140;
    }
    char lib[sizeof fxr_dir + sizeof version + 16];
    if ((size_t)snprintf(lib, sizeof lib, "%s/%s/libhostfxr.so", fxr_dir, version) >= sizeof lib) {
        return 140;
    }
    void *fxr = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (fxr == NULL) {
        fprintf(stderr, "dotnet-muxer: %s\n", dlerror());
        return 140;
    }
    hostfxr_main_fn main_fn = (hostfxr_main_fn)dlsym(fxr, "hostfxr_main");
    if (main_fn == NULL) {
        fprintf(stderr, "dotnet-muxer: %s has no hostfxr_main\n", lib);
        return 140;
    }
    return main_fn(argc, argv);
}
