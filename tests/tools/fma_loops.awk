# The innermost loops of a gcc .s file (a label and a later jump back to it,
# with no other such loop inside) that hold vector FMAs; prints for each:
# its label, its FMAs and its vector accesses to the stack (spills).
/^\.L[0-9]+:/ { start[substr($1, 1, length($1) - 1)] = NR }
{ line[NR] = $0 }
/^\tj[a-z]+\t\.L[0-9]+$/ && ($2 in start) { n++; lo[n] = start[$2]; hi[n] = NR; name[n] = $2 }
END {
    for (k = 1; k <= n; k++) {
        inner = 1
        for (j = 1; j <= n; j++)
            if (j != k && lo[j] >= lo[k] && hi[j] <= hi[k] && (lo[j] > lo[k] || hi[j] < hi[k])) inner = 0
        if (!inner) continue
        f = 0; s = 0
        for (i = lo[k]; i <= hi[k]; i++) {
            if (line[i] ~ /vfmadd/) f++
            if (line[i] ~ /[xyz]mm/ && line[i] ~ /\(%r(sp|bp)\)/) s++
        }
        if (f) print name[k], f, s
    }
}
