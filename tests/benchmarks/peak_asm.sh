#!/bin/sh
# peak_asm.sh — the FMA peak probe's loops (benchmarks/bench_peak.c), read
# back from the compiled test binary with objdump: each ISA's loop is its
# chains' FMAs (SSE: multiplies and adds) on registers of its width, with no
# memory operand and no other vector instruction inside the loop (an
# accumulator spilled to the stack would be stored and reloaded there). All three are checked on any host, including
# the loops for ISAs the host cannot run (they are compiled all the same).
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
BIN=$top_builddir/tests/benchmarks/test_peak
if ! command -v objdump >/dev/null 2>&1; then
    echo "1..0 # SKIP objdump (binutils) is not installed"
    exit 0
fi
objdump -d --no-show-raw-insn "$BIN" >"$TMP/dis" 2>"$TMP/err" || { tap_fail "objdump reads $BIN" "$(cat "$TMP/err")"; tap_done; exit 1; }

# loop FUNC OPS: prints the function's loop, one instruction a line: of
# the ranges from a backward conditional jump's target to that jump, the one
# holding the most instructions matching the regular expression OPS (a
# sanitizer build adds loops of its own around the function's)
loop() {
    awk -v f="$1" -v ops="$2" '
        function hex(s,  i, v) { v = 0; for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1; return v }
        $0 ~ "^[0-9a-f]+ <" f "(\\.[a-z0-9.]+)?>:$" { on = 1; next }
        on && /^$/ { exit }
        on && /^ *[0-9a-f]+:/ {
            a = $1; sub(":", "", a); n++; addr[n] = hex(a)
            sub(/^ *[0-9a-f]+:[ \t]*/, ""); ins[n] = $0
            if (ins[n] ~ /^j[a-z]+ +[0-9a-f]+ </ && ins[n] !~ /^jmp/) {
                split(ins[n], w, " "); t = hex(w[2])
                if (t < addr[n]) { nj++; jlo[nj] = t; jhi[nj] = addr[n] }
            }
        }
        END {
            best = 0
            for (j = 1; j <= nj; j++) {
                c = 0
                for (i = 1; i <= n; i++) if (addr[i] >= jlo[j] && addr[i] <= jhi[j] && ins[i] ~ "^(" ops ")[ \t]") c++
                if (c > best) { best = c; lo = jlo[j]; hi = jhi[j] }
            }
            if (best) for (i = 1; i <= n; i++) if (addr[i] >= lo && addr[i] <= hi) print ins[i]
        }' "$TMP/dis"
}
# whole FUNC: every instruction of the function
whole() {
    awk -v f="$1" '$0 ~ "^[0-9a-f]+ <" f "(\\.[a-z0-9.]+)?>:$" { on = 1; next } on && /^$/ { exit } on' "$TMP/dis"
}

# check FUNC REG CHAINS OP...: the loop holds a multiple of CHAINS of each
# OP, every one on REG registers only, and no other vector instruction (no
# spill, reload or move of an accumulator)
check() {
    f=$1 reg=$2 chains=$3; shift 3
    ops=$(printf '%s|' "$@"); ops=${ops%|}
    loop "$f" "$ops" >"$TMP/$f.loop"
    if [ ! -s "$TMP/$f.loop" ]; then
        tap_fail "$f: a loop is found" "$(whole "$f" | head -40)"
        return
    fi
    for op in "$@"; do
        n=$(grep -cE "^${op}[ \t]" "$TMP/$f.loop")
        onreg=$(grep -E "^${op}[ \t]" "$TMP/$f.loop" | grep -vE '\(|\$' | grep -cE "^${op}[ \t]+%${reg}[0-9]+,%${reg}[0-9]+(,%${reg}[0-9]+)?$")
        if [ "$n" -gt 0 ] && [ $((n % chains)) -eq 0 ] && [ "$onreg" -eq "$n" ]; then
            tap_ok "$f: $n ${op} on %${reg} registers in the loop ($chains chains)"
        else
            tap_fail "$f: a multiple of $chains ${op} on %${reg} registers in the loop (found $n, $onreg on registers)" \
                "$(cat "$TMP/$f.loop")"
        fi
    done
    if grep -q '(' "$TMP/$f.loop"; then
        tap_fail "$f: no memory operand in the loop" "$(grep '(' "$TMP/$f.loop")"
    else
        tap_ok "$f: no memory operand in the loop"
    fi
    if grep -vE "^($ops)[ \t]" "$TMP/$f.loop" | grep -q '%[xyz]mm'; then
        tap_fail "$f: no other vector instruction in the loop (spills, reloads, moves)" \
            "$(grep -vE "^($ops)[ \t]" "$TMP/$f.loop" | grep '%[xyz]mm')"
    else
        tap_ok "$f: no other vector instruction in the loop (spills, reloads, moves)"
    fi
}

check peak_loop_avx512 zmm 16 'vfmadd[0-9]+ps'
check peak_loop_avx2 ymm 12 'vfmadd[0-9]+ps'
check peak_loop_sse xmm 12 mulps addps
tap_done
