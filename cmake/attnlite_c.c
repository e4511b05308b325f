/* libattnlite_c.so (option ATTNLITE_SHARED_C): the library's code comes from the static
 * attnlite library, linked whole; this file only gives the shared library a source. */
#include "attnlite/c_api.h"
