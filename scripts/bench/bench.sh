#!/usr/bin/env bash
# The benchmark command: run-time cost of the COM core (timed, and
# instructions per call under callgrind), compile-time scaling of
# com_interface!, and profiler overhead on a real CoreCLR. Prints markdown
# tables; docs/performance.md holds the figures of one run.
#
#   bash scripts/bench/bench.sh            # everything
#   bash scripts/bench/bench.sh calls      # run-time cost only
#   bash scripts/bench/bench.sh compile    # compile-time scaling only
#   bash scripts/bench/bench.sh runtime    # overhead on a real runtime only
#   bash scripts/bench/bench.sh hooks      # enter/leave hooks against a C floor (scripts/bench/bench-hooks.sh)
#   bash scripts/bench/bench.sh build      # clean build time of the library per Cargo feature set
#   bash scripts/bench/bench.sh calltarget # CallTarget wrapping cost per call and bytes (scripts/bench/bench-calltarget.sh)
#   bash scripts/bench/bench.sh calltarget-startup # CallTarget's cost to Roslyn's start-up (scripts/bench/bench-calltarget-startup.sh)
#   bash scripts/bench/bench.sh sampler    # sampling profiler overhead and pause per sample (scripts/bench/bench-sampler.sh)
#   bash scripts/bench/bench.sh web        # a profiler's cost to an ASP.NET Core server under wrk (scripts/bench/bench-web.sh:
#                                    # the sampler in its default and suspend-runtime modes, and CallTarget wrapping two methods)
#   bash scripts/bench/bench.sh wrapjit    # JIT-time cost of wrapping 1,000 methods with CallTarget (scripts/bench/bench-wrap-jit.sh)
#   bash scripts/bench/bench.sh soak       # RSS of a server under continuous profiling, 10 min (scripts/bench/bench-soak.sh)
#   bash scripts/bench/bench.sh coverage   # coverage's cost to a CPU-bound program (scripts/bench/bench-coverage.sh)
#   bash scripts/bench/bench.sh oop        # corprof against dotnet-trace and dotnet-counters: start-up, memory, size (scripts/bench/bench-oop.sh)
set -euo pipefail
cd "$(dirname "$0")/../.."
what="${1:-all}"

die() { printf 'error: %s\n' "$*" >&2; exit 1; }
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

machine() {
    echo "Machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -m), $(rustc --version)"
    grep -m1 'model name' /proc/cpuinfo | sed 's/.*: /CPU: /' || true
}

calls() {
    echo "## Run-time cost (cargo bench --bench com_calls)"
    echo
    cargo bench --bench com_calls 2>/dev/null
    echo
    if ! command -v valgrind >/dev/null; then
        apt-get install -y valgrind >/dev/null 2>&1 || die "valgrind is needed for instruction counts (apt-get install valgrind)"
    fi
    local bin
    bin=$(cargo bench --bench com_calls --no-run --message-format=json 2>/dev/null \
        | python3 -c 'import json,sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] == "com_calls":
        print(m["executable"])')
    [ -x "$bin" ] || die "benchmark binary not found"
    local out
    out=$(mktemp -d)
    ir() { # total instructions of one run
        valgrind --tool=callgrind --callgrind-out-file="$out/cg" "$bin" --callgrind "$1" "$2" >/dev/null 2>&1
        awk '/^summary:/ {print $2}' "$out/cg"
    }
    per_op() { # (Ir(2N) - Ir(N)) / N: fixed costs cancel out
        local a b
        a=$(ir "$1" 100000); b=$(ir "$1" 200000)
        python3 -c "print(f'{($b - $a) / 100000:.1f}')"
    }
    echo "### Instructions per operation (valgrind --tool=callgrind; (Ir(200k) - Ir(100k)) / 100k)"
    echo
    echo "| measurement | instructions/op | baseline | baseline instructions/op | difference |"
    echo "|---|---|---|---|---|"
    row() {
        local v f
        v=$(per_op "$2"); f=$(per_op "$4")
        echo "| $1 | $v | $3 | $f | $(python3 -c "print(f'{$v - $f:+.1f}')") |"
    }
    row "exporter thunk (native-style call)" thunk "hand-written vtable" floor
    row "invoker method call" invoker "raw fn-pointer call" raw_call
    row "QueryInterface hit (+Release)" qi_hit "hand-written QI hit (+Release)" floor_qi_hit
    row "QueryInterface miss" qi_miss "hand-written QI miss" floor_qi_miss
    row "AddRef+Release" addref_release "hand-written AddRef+Release" floor_refs
    rm -rf "$out"
    echo
}

compile() {
    echo "## Compile time of com_interface! (clean build of one generated crate, corprof prebuilt)"
    echo
    local root="$PWD" dir="$PWD/target/bench-compile"
    rm -rf "$dir"; mkdir -p "$dir"
    make_crate() { # name, generator args...
        local name=$1; shift
        mkdir -p "$dir/$name/src"
        cat > "$dir/$name/Cargo.toml" <<EOF
[package]
name = "$name"
version = "0.0.0"
edition = "2021"
publish = false
[dependencies]
corprof = { path = "$root" }
[workspace]
EOF
        if [ "$1" = empty ]; then
            printf 'pub fn nothing() {}\n' > "$dir/$name/src/lib.rs"
        else
            python3 "$root/scripts/gen/gen-scale.py" "$@" > "$dir/$name/src/lib.rs"
        fi
    }
    build_seconds() { # the fastest of 7 rebuilds of the crate alone (noise only adds time)
        local name=$1 i s
        CARGO_TARGET_DIR="$dir/target" cargo build -q --manifest-path "$dir/$name/Cargo.toml" 2>/dev/null
        for i in 1 2 3 4 5 6 7; do
            touch "$dir/$name/src/lib.rs"
            s=$(date +%s.%N)
            CARGO_TARGET_DIR="$dir/target" cargo build -q --manifest-path "$dir/$name/Cargo.toml" 2>/dev/null
            python3 -c "import time; print(f'{time.time() - $s:.3f}')"
        done | sort -g | head -n 1
    }
    make_crate empty_crate empty
    local base
    base=$(build_seconds empty_crate)
    echo "Each figure is the fastest of 7 rebuilds of one generated crate (corprof already built)."
    echo "An empty crate depending on corprof rebuilds in ${base} s. Linear cost means a constant"
    echo "slope: the extra milliseconds per method (or per level) from one size to the next."
    echo
    echo "| generated | size | seconds | slope from previous size |"
    echo "|---|---|---|---|"
    local n s prev_n prev_s
    prev_n=0; prev_s=$base
    for n in 50 200 800; do
        make_crate "methods_$n" methods "$n"
        s=$(build_seconds "methods_$n")
        echo "| one interface | $n methods | $s | $(python3 -c "print(f'{1000 * ($s - $prev_s) / ($n - $prev_n):.2f} ms per method')") |"
        prev_n=$n; prev_s=$s
    done
    prev_n=0; prev_s=$base
    for n in 4 12 24; do
        make_crate "chain_$n" chain "$n"
        s=$(build_seconds "chain_$n")
        echo "| inheritance chain | depth $n | $s | $(python3 -c "print(f'{1000 * ($s - $prev_s) / ($n - $prev_n):.2f} ms per level')") |"
        prev_n=$n; prev_s=$s
    done
    echo
}

# Clean debug builds of the library (`cargo build --lib`, a fresh target
# directory each time) for each feature set, interleaved: round r builds
# every set once, in order, so that the machine's load falls on all alike.
# CORPROF_BUILD_ROUNDS rounds (default 5); the median per set, and its ratio
# to the build with every feature, measured in the same run.
build() {
    local rounds="${CORPROF_BUILD_ROUNDS:-5}" features sets=() names=() r i t0 t1 dir
    features=$(awk '/^\[features\]/ { on = 1; next } /^\[/ { on = 0 } on && /^[a-z_]+ *=/ { sub(/ *=.*/, ""); print }' Cargo.toml | grep -vx default)
    names+=("facade only (std)"); sets+=("--no-default-features --features std")
    names+=("no features (COM core, raw API)"); sets+=("--no-default-features")
    for f in $features; do
        [ "$f" = std ] && continue
        names+=("$f alone"); sets+=("--no-default-features --features $f")
    done
    names+=("all features"); sets+=("--all-features")
    local out
    out=$(mktemp -d)
    cargo build --quiet --lib --all-features --target-dir "$out/warm" # sysroot and caches warm
    for ((r = 0; r < rounds; r++)); do
        for i in "${!sets[@]}"; do
            dir="$out/t$i"
            rm -rf "$dir"
            t0=$(date +%s.%N)
            # shellcheck disable=SC2086
            cargo build --quiet --lib ${sets[$i]} --target-dir "$dir" || die "build failed: ${sets[$i]}"
            t1=$(date +%s.%N)
            python3 -c "print($t1 - $t0)" >>"$out/s$i"
        done
    done
    local all=$((${#sets[@]} - 1)) all_s
    all_s=$(median <"$out/s$all")
    echo "## Clean build time of the library (\`cargo build --lib\`, debug; median of $rounds interleaved rounds)"
    echo
    echo "| features | cargo flags | seconds | ratio to all features |"
    echo "|---|---|---|---|"
    for i in "${!sets[@]}"; do
        local m
        m=$(median <"$out/s$i")
        printf '| %s | `%s` | %.2f | %.2fx |\n' "${names[$i]}" "${sets[$i]}" "$m" "$(python3 -c "print($m / $all_s)")"
    done
    echo
    rm -rf "$out"
}

case "$what" in
    all) machine; echo; calls; compile; [ -f scripts/bench/bench-runtime.sh ] && bash scripts/bench/bench-runtime.sh; bash scripts/bench/bench-hooks.sh ;;
    calls) machine; echo; calls ;;
    compile) machine; echo; compile ;;
    runtime) machine; echo; bash scripts/bench/bench-runtime.sh ;;
    hooks) machine; echo; bash scripts/bench/bench-hooks.sh ;;
    build) machine; echo; build ;;
    calltarget) machine; echo; bash scripts/bench/bench-calltarget.sh ;;
    calltarget-startup) machine; echo; bash scripts/bench/bench-calltarget-startup.sh ;;
    sampler) machine; echo; bash scripts/bench/bench-sampler.sh ;;
    wrapjit) machine; echo; bash scripts/bench/bench-wrap-jit.sh ;;
    web) machine; echo; CONFIGS="${CONFIGS:-sampler sampler-suspend-runtime calltarget}" bash scripts/bench/bench-web.sh ;;
    soak) machine; echo; bash scripts/bench/bench-soak.sh ;;
    coverage) machine; echo; bash scripts/bench/bench-coverage.sh ;;
    oop) machine; echo; bash scripts/bench/bench-oop.sh ;;
    *) die "usage: scripts/bench/bench.sh [all|calls|compile|runtime|hooks|build|calltarget|calltarget-startup|sampler|web|wrapjit|soak|coverage|oop]" ;;
esac
