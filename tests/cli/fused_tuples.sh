#!/bin/sh
# fused_tuples.sh — fused functions that take tuples compile and match the
# interpreter: a concatenate of several inputs fused with the ops around it,
# a primitive function with a tuple-typed parameter as TVM prints them (gpt2:
# a fused concatenate or split taking one tuple), fed by a tuple literal or
# by split's result, read whole and through projections. A tuple's fields
# are the kernel's arguments, one each; a tuple parameter of a function
# with a tunable anchor is refused by name.
. "$(dirname "$0")/../lib.sh"
RELAY_TUNE_CACHE="$TMP/cache"
mkdir -p "$RELAY_TUNE_CACHE"
export RELAY_TUNE_CACHE
NPYCMP="$top_builddir/tests/tools/npycmp"
# same NAME FILE: the compiled run of FILE against the interpreter's, bit for bit
same() {
    "$RELAY_TUNE" run "$2" --random-params 5 --output "$TMP/ref.npy" >/dev/null 2>"$TMP/err" ||
        tap_fail "$1: interpret" "$(cat "$TMP/err")"
    tap_run "$1: compile and run" 0 "$RELAY_TUNE" run "$2" --random-params 5 --target cpu --output "$TMP/got.npy"
    tap_run "$1: the interpreter's result" 0 "$NPYCMP" "$TMP/ref.npy" "$TMP/got.npy"
}

cat >"$TMP/concat.relay" <<'EOT'
#[version = "0.0.5"]
def @main(%a: Tensor[(1, 4, 6, 6), float32], %b: Tensor[(1, 3, 6, 6), float32], %c: Tensor[(1, 5, 6, 6), float32]) {
  %0 = nn.relu(%a);
  %1 = negative(%b);
  %2 = concatenate((%0, %1, %c), axis=1);
  nn.relu(%2)
}
EOT
"$RELAY_TUNE" opt "$TMP/concat.relay" >"$TMP/opt.relay" 2>"$TMP/err"
n=$(grep -c "Primitive=1" "$TMP/opt.relay")
[ "$n" -eq 1 ] && tap_ok "the concatenate fuses with its producers and consumer (one function)" ||
    tap_fail "the concatenate fuses into one function" "$(cat "$TMP/opt.relay" "$TMP/err")"
same "fused concatenate of three inputs" "$TMP/concat.relay"

cat >"$TMP/tuple.relay" <<'EOT'
#[version = "0.0.5"]
def @main(%a: Tensor[(2, 4), float32], %b: Tensor[(2, 3), float32], %c: Tensor[(2, 5), float32]) {
  %0 = fn (%p0: (Tensor[(2, 4), float32], Tensor[(2, 3), float32], Tensor[(2, 5), float32]), Primitive=1) -> Tensor[(2, 12), float32] {
    %1 = concatenate(%p0, axis=1);
    nn.relu(%1)
  };
  %0((%a, %b, %c))
}
EOT
same "a tuple parameter, a tuple literal argument" "$TMP/tuple.relay"

cat >"$TMP/split.relay" <<'EOT'
#[version = "0.0.5"]
def @main(%x: Tensor[(2, 12), float32], %w: Tensor[(2, 4), float32]) {
  %0 = split(%x, indices_or_sections=3, axis=1);
  %1 = fn (%p0: (Tensor[(2, 4), float32], Tensor[(2, 4), float32], Tensor[(2, 4), float32]), %p1: Tensor[(2, 4), float32], Primitive=1) -> Tensor[(2, 4), float32] {
    %2 = add(%p0.0, %p0.2);
    multiply(%2, %p1)
  };
  %1(%0, %w)
}
EOT
same "a tuple parameter read by projection, fed by split" "$TMP/split.relay"

cat >"$TMP/anchor.relay" <<'EOT'
#[version = "0.0.5"]
def @main(%x: Tensor[(2, 8), float32], %w: Tensor[(4, 8), float32]) {
  %0 = fn (%p0: (Tensor[(2, 8), float32], Tensor[(4, 8), float32]), Primitive=1) -> Tensor[(2, 4), float32] {
    nn.dense(%p0.0, %p0.1)
  };
  %0((%x, %w))
}
EOT
tap_run "a tuple parameter of a dense function" 1 "$RELAY_TUNE" run "$TMP/anchor.relay" --random-params 5 --target cpu
tap_has "  is refused by name" "$TMP/err" "tuple parameter of a function with a tunable anchor"
tap_done
