"""Writing .npz files reproducibly: the same members and bytes as
numpy.savez (stored) or numpy.savez_compressed (deflated), with a fixed
timestamp, so that running a generator again changes no committed file."""
import io
import zipfile

import numpy as np


def write_npz(path, arrays, compress):
    method = zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED
    with zipfile.ZipFile(path, "w", compression=method) as z:
        for key, arr in arrays.items():
            buf = io.BytesIO()
            np.lib.format.write_array(buf, np.asarray(arr), allow_pickle=False)
            info = zipfile.ZipInfo(key + ".npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = method
            info.external_attr = 0o644 << 16
            z.writestr(info, buf.getvalue())
