#ifndef SYNCCLIENT_CPIXBUF_SHIM_H
#define SYNCCLIENT_CPIXBUF_SHIM_H

// The terminal client's one C room for pictures: gdk-pixbuf decodes PNG and
// JPEG itself, SVG through librsvg's loader and WebP through
// webp-pixbuf-loader (Debian packages). Swift cannot call the g_signal_connect
// macro, so the loading is done here, in one function.
#include <gdk-pixbuf/gdk-pixbuf.h>
#include <stdio.h>
#include <string.h>

typedef struct {
    int max_side;
    int width, height;
} shpix_size;

/// Asks the loader to scale the picture to fit max_side x max_side (an SVG is
/// rendered at that size; a JPEG is decoded at a reduced scale).
static void shpix_size_prepared(GdkPixbufLoader *loader, int width, int height, gpointer data)
{
    shpix_size *size = (shpix_size *)data;
    size->width = width;
    size->height = height;
    if (width <= 0 || height <= 0 || (width <= size->max_side && height <= size->max_side)) return;
    double scale = width > height ? (double)size->max_side / width : (double)size->max_side / height;
    int w = (int)(width * scale + 0.5), h = (int)(height * scale + 0.5);
    gdk_pixbuf_loader_set_size(loader, w < 1 ? 1 : w, h < 1 ? 1 : h);
}

/// Decodes `length` bytes of a picture of type `mime` ("image/png", ...),
/// scaled to fit `max_side` pixels each way. Returns a new reference (release
/// it with g_object_unref), or NULL with a message in `message` (at most
/// `message_size` bytes, NUL-terminated).
static inline GdkPixbuf *shpix_decode(const unsigned char *bytes, size_t length, const char *mime, int max_side,
                                      char *message, size_t message_size)
{
    GError *error = NULL;
    message[0] = 0;
    GdkPixbufLoader *loader = gdk_pixbuf_loader_new_with_mime_type(mime, &error);
    if (loader == NULL) {
        snprintf(message, message_size, "%s", error != NULL ? error->message : "no loader for this type");
        g_clear_error(&error);
        return NULL;
    }
    shpix_size size = { max_side, 0, 0 };
    g_signal_connect(loader, "size-prepared", G_CALLBACK(shpix_size_prepared), &size);
    gboolean written = gdk_pixbuf_loader_write(loader, bytes, length, &error);
    // Closing is needed in every case; after a failed write its own error is not wanted.
    gboolean closed = gdk_pixbuf_loader_close(loader, written ? &error : NULL);
    GdkPixbuf *pixbuf = NULL;
    if (written && closed) {
        pixbuf = gdk_pixbuf_loader_get_pixbuf(loader);
        if (pixbuf != NULL) g_object_ref(pixbuf);
    }
    if (pixbuf == NULL) snprintf(message, message_size, "%s", error != NULL ? error->message : "not a picture");
    g_clear_error(&error);
    // `size` lives on this stack: no signal may reach it once this returns.
    g_signal_handlers_disconnect_by_data(loader, &size);
    g_object_unref(loader);
    // A loader that ignored the requested size: scale here.
    if (pixbuf != NULL && (gdk_pixbuf_get_width(pixbuf) > max_side || gdk_pixbuf_get_height(pixbuf) > max_side)) {
        int width = gdk_pixbuf_get_width(pixbuf), height = gdk_pixbuf_get_height(pixbuf);
        double scale = width > height ? (double)max_side / width : (double)max_side / height;
        int w = (int)(width * scale + 0.5), h = (int)(height * scale + 0.5);
        GdkPixbuf *scaled = gdk_pixbuf_scale_simple(pixbuf, w < 1 ? 1 : w, h < 1 ? 1 : h, GDK_INTERP_BILINEAR);
        g_object_unref(pixbuf);
        pixbuf = scaled;
        if (pixbuf == NULL) snprintf(message, message_size, "out of memory scaling the picture");
    }
    return pixbuf;
}

#endif
