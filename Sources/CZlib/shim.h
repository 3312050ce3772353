#include <zlib.h>

/// deflateInit and inflateInit are macros (they pass the library's version
/// and the stream's size); Swift cannot import them.
static inline int czlib_deflate_init(z_stream *stream, int level) { return deflateInit(stream, level); }
static inline int czlib_inflate_init(z_stream *stream) { return inflateInit(stream); }
