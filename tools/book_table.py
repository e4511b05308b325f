"""Print the book's translation table for the shipped models, as Markdown.

    /usr/bin/python3 tools/book_table.py [CORPUS] > models/book_table.md

Code: tools/attnlite_tools/fixtures_translation.py, main_book_table().
"""
from attnlite_tools.fixtures_translation import main_book_table

if __name__ == "__main__":
    main_book_table()
