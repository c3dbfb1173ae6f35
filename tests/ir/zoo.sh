#!/bin/sh
# zoo.sh — every model of the zoo parses and type-checks, its printed return
# type is the expected one, and print∘parse is a fixed point.
. "$(dirname "$0")/../lib.sh"
want() {
    case "$1" in
    bert_layer) echo "Tensor[(1, 128, 768), float32]" ;;
    mlp) echo "Tensor[(1, 10), float32]" ;;
    *) echo "Tensor[(1, 1000), float32]" ;;
    esac
}
n=0
for f in "$top_srcdir"/benchmarks/models/*.relay; do
    n=$((n + 1))
    name=$(basename "$f" .relay)
    if ! "$RELAY_TUNE" parse "$f" >"$TMP/a" 2>"$TMP/err"; then
        tap_fail "zoo $name parses and type-checks" "$(head -n 5 "$TMP/err")"
        continue
    fi
    tap_ok "zoo $name parses and type-checks"
    if cmp -s "$f" "$TMP/a"; then
        tap_ok "zoo $name is stored in canonical form"
    else
        tap_fail "zoo $name is stored in canonical form (regenerate with benchmarks/gen/make_zoo.py)" "$(diff "$f" "$TMP/a" | head -n 10)"
    fi
    if grep -q "^def @main(.*) -> $(want "$name" | sed 's/[][]/\\&/g') {\$" "$TMP/a"; then
        tap_ok "zoo $name returns $(want "$name")"
    else
        tap_fail "zoo $name returns $(want "$name")" "$(grep '^def' "$TMP/a" | cut -c1-200)"
    fi
    "$RELAY_TUNE" parse "$TMP/a" >"$TMP/b" 2>"$TMP/err"
    if cmp -s "$TMP/a" "$TMP/b"; then
        tap_ok "zoo $name: print(parse(print(parse(x)))) == print(parse(x))"
    else
        tap_fail "zoo $name: print∘parse is a fixed point" "$(diff "$TMP/a" "$TMP/b" | head -n 20)"
    fi
done
[ $n -ge 6 ] && tap_ok "zoo has $n models" || tap_fail "zoo has at least 6 models (found $n)"
tap_done
