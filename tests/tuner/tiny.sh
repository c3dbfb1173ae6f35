# tiny.sh — what the tuner's shell tests share (sourced after tests/lib.sh):
# the tiny model in $M, the quick measurement options $Q, and counting a
# database's records and its configs measured twice.
export RELAY_TUNE_CACHE="$TMP/cache"
# The model is tiny on purpose: the dense's space is measured whole (twice,
# by the schedulers' checks), and a dense of 256 inputs compiles about 8
# times faster than one of 1024 (tests/tuner/tiny.h holds the same model).
M="$TMP/tiny.relay"
cat >"$M" <<'RELAY'
#[version = "0.0.5"]
def @main(%x: Tensor[(1, 8, 4, 4), float32], %w: Tensor[(16, 8, 3, 3), float32], %d: Tensor[(4, 256), float32]) {
  %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1], channels=16, kernel_size=[3, 3]);
  %1 = nn.relu(%0);
  %2 = reshape(%1, newshape=[1, 256]);
  nn.dense(%2, %d, units=4)
}
RELAY
# a quick measurement: these tests are about bookkeeping, not speed
# (and no confirmation at each task's end unless a test asks for it)
Q="--repeat 1 --min-repeat-ms 1 --progress lines --confirm 0"

records() { "$RELAY_TUNE" db stats --json --db "$1" 2>/dev/null | sed -n 's/.*"records": *\([0-9]*\).*/\1/p'; }
# configs measured twice in a database (workload hash + config index)
twice() {
    "$RELAY_TUNE" db export --db "$1" | sed -n 's/.*"hash":"\([0-9a-f]*\)".*"index":\([0-9]*\)}.*/\1 \2/p' | sort | uniq -d | wc -l
}
