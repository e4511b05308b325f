"""Print a summary of attnlite model files (the format: tools/attnlite_tools/export.py).

    /usr/bin/python3 tools/export.py MODEL.safetensors...

Code: tools/attnlite_tools/export.py, main().
"""
from attnlite_tools.export import main

if __name__ == "__main__":
    main()
