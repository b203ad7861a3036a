# Shared by the test scripts that install what they need (sourced, not run).
# The caller defines die and say.

# Installs the Debian packages given (apt-get, as root), logging to LOG;
# dies with a one-line reason when that is not possible.
#   install_apt_packages LOG PACKAGE...
install_apt_packages() {
    local log="$1"
    shift
    [ $# -gt 0 ] || return 0
    [ "$(id -u)" = 0 ] || die "missing $*; install them (apt-get install $*) and retry"
    command -v apt-get >/dev/null 2>&1 || die "missing $* and there is no apt-get to install them with"
    say "installing $* with apt-get"
    mkdir -p "$(dirname "$log")"
    { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@"; } \
        >"$log" 2>&1 || die "apt-get install $* failed (see $log)"
}

# Adds a Rust target with rustup unless it is installed.
#   install_rust_target TARGET
install_rust_target() {
    if ! rustup target list --installed 2>/dev/null | grep -qx "$1"; then
        say "adding the Rust target $1"
        rustup target add "$1" >/dev/null 2>&1 || die "rustup target add $1 failed"
    fi
}
