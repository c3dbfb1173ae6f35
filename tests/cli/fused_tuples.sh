#!/bin/sh
# fused_tuples.sh — fused functions that take tuples compile and match the
# interpreter: a concatenate of several inputs fused with the ops around it,
# a primitive function with a tuple-typed parameter as TVM prints them (gpt2:
# a fused concatenate or split taking one tuple), fed by a tuple literal or
# by split's result, read whole and through projections. A tuple's fields
# are the kernel's arguments, one each. Functions with a tunable anchor take
# tuples too (conv2d and dense templates find their weights through the
# projection, sch_param_tensor): a dense of a tuple's two fields, a conv
# whose concatenate epilogue takes a tuple, a concatenate of a tuple feeding
# a conv, a float16 conv whose weight is a tuple's field (packed once,
# widened); compiled against the interpreter (within 1e-5 of its largest
# value in float32, 5e-3 in float16: the conv sums in another order), and
# one of them tuned.
. "$(dirname "$0")/../lib.sh"
RELAY_TUNE_CACHE="$TMP/cache"
mkdir -p "$RELAY_TUNE_CACHE"
export RELAY_TUNE_CACHE
NPYCMP="$top_builddir/tests/tools/npycmp"
# same NAME FILE [TOL]: the compiled run of FILE against the interpreter's,
# bit for bit (or within TOL of its largest value)
same() {
    "$RELAY_TUNE" run "$2" --random-params 5 --output "$TMP/ref.npy" >/dev/null 2>"$TMP/err" ||
        tap_fail "$1: interpret" "$(cat "$TMP/err")"
    tap_run "$1: compile and run" 0 "$RELAY_TUNE" run "$2" --random-params 5 --target cpu --output "$TMP/got.npy"
    if [ -n "$3" ]; then
        tap_run "$1: the interpreter's result within $3" 0 "$NPYCMP" -v "$TMP/ref.npy" "$TMP/got.npy" "$3"
        echo "# $1: error $(cat "$TMP/out")"
    else
        tap_run "$1: the interpreter's result" 0 "$NPYCMP" "$TMP/ref.npy" "$TMP/got.npy"
    fi
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
same "a dense of a tuple parameter's fields" "$TMP/anchor.relay" 1e-5

cat >"$TMP/conv_epi.relay" <<'EOT'
#[version = "0.0.5"]
def @main(%x: Tensor[(1, 8, 10, 10), float32], %w: Tensor[(16, 8, 3, 3), float32], %a: Tensor[(1, 4, 10, 10), float32], %b: Tensor[(1, 2, 10, 10), float32]) {
  %0 = fn (%p0: Tensor[(1, 8, 10, 10), float32], %p1: Tensor[(16, 8, 3, 3), float32], %p2: (Tensor[(1, 4, 10, 10), float32], Tensor[(1, 2, 10, 10), float32]), Primitive=1) -> Tensor[(1, 22, 10, 10), float32] {
    %1 = nn.conv2d(%p0, %p1, padding=[1, 1, 1, 1], channels=16, kernel_size=[3, 3]);
    %2 = nn.relu(%1);
    concatenate((%2, %p2.0, %p2.1), axis=1)
  };
  %0(%x, %w, (%a, %b))
}
EOT
"$RELAY_TUNE" tasks "$TMP/conv_epi.relay" >"$TMP/tasks.txt" 2>&1
tap_has "a conv with a concatenate epilogue taking a tuple is a conv2d task" "$TMP/tasks.txt" "conv2d_nchw"
same "a conv with a concatenate epilogue taking a tuple" "$TMP/conv_epi.relay" 1e-5

cat >"$TMP/conv_pro.relay" <<'EOT'
#[version = "0.0.5"]
def @main(%a: Tensor[(1, 4, 10, 10), float32], %w: Tensor[(16, 8, 3, 3), float32], %b: Tensor[(1, 4, 10, 10), float32]) {
  %0 = fn (%p0: (Tensor[(1, 4, 10, 10), float32], Tensor[(1, 4, 10, 10), float32]), %p1: Tensor[(16, 8, 3, 3), float32], Primitive=1) -> Tensor[(1, 16, 10, 10), float32] {
    %1 = concatenate(%p0, axis=1);
    nn.conv2d(%1, %p1, padding=[1, 1, 1, 1], channels=16, kernel_size=[3, 3])
  };
  %0((%a, %b), %w)
}
EOT
same "a concatenate of a tuple feeding a conv" "$TMP/conv_pro.relay" 1e-5

cat >"$TMP/conv_w.relay" <<'EOT'
#[version = "0.0.5"]
def @main(%x: Tensor[(1, 8, 10, 10), float16], %w: Tensor[(16, 8, 3, 3), float16]) {
  %0 = fn (%p0: (Tensor[(1, 8, 10, 10), float16], Tensor[(16, 8, 3, 3), float16]), Primitive=1) -> Tensor[(1, 16, 10, 10), float16] {
    nn.conv2d(%p0.0, %p0.1, padding=[1, 1, 1, 1], channels=16, kernel_size=[3, 3])
  };
  %0((%x, %w))
}
EOT
rm -f "$RELAY_TUNE_CACHE"/*.c
same "a float16 conv whose weight is a tuple's field" "$TMP/conv_w.relay" 5e-3
cat "$RELAY_TUNE_CACHE"/*.c >"$TMP/w.c" 2>/dev/null
tap_has "  the weight, a constant field, packed once ahead of time as floats" "$TMP/w.c" "_p0_body(const _Float16 *restrict p0, float *restrict w0)"

# tuning a task whose function takes a tuple: inputs per field, the
# interpreter's reference called with the tuple
tap_run "tune the dense of a tuple's fields" 0 "$RELAY_TUNE" tune "$TMP/anchor.relay" --trials 2 --tuner random \
    --db "$TMP/t.db" --random-params 5
tap_run "  and compile it with the tuned config" 0 "$RELAY_TUNE" run "$TMP/anchor.relay" --random-params 5 --target cpu \
    --db "$TMP/t.db" --output "$TMP/got.npy"
"$RELAY_TUNE" run "$TMP/anchor.relay" --random-params 5 --output "$TMP/ref.npy" >/dev/null 2>&1
tap_run "  the interpreter's result within 1e-5" 0 "$NPYCMP" -v "$TMP/ref.npy" "$TMP/got.npy" 1e-5
tap_done
