"""The safetensors reader/writer (tools/attnlite_tools/safetensors.py): self-test or inspector.

    /usr/bin/python3 tools/safetensors_io.py            # self-test
    /usr/bin/python3 tools/safetensors_io.py FILE...    # print metadata, names, dtypes, shapes

Code: tools/attnlite_tools/safetensors.py, main().
"""
from attnlite_tools.safetensors import main

if __name__ == "__main__":
    main()
