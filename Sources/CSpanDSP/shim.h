// spandsp 0.0.6 (Debian's libspandsp-dev): G.711, G.722 and packet loss concealment.
//
// Only the headers of the parts used are included, not <spandsp.h>: the umbrella pulls in
// libtiff's <tiffio.h> and every fax and modem module. The per-part headers do not include
// what they need themselves (the umbrella does that), hence the standard headers and
// telephony.h (SPAN_DECLARE) and bit_operations.h (top_bit, used by g711.h's inline
// functions) first.
//
// Swift imports every function, struct and constant the SpanDSP module uses as they are,
// including g711.h's static inline linear_to_ulaw and friends, so there is no wrapper here
// yet. A wrapper added later is a static inline function prefixed cspandsp_, with a comment
// saying what Swift cannot import.
#ifndef CALLAUDIO_CSPANDSP_SHIM_H
#define CALLAUDIO_CSPANDSP_SHIM_H

#include <stdint.h>
#include <inttypes.h>
#include <stdbool.h>

#include <spandsp/telephony.h>
#include <spandsp/bit_operations.h>
#include <spandsp/g711.h>
#include <spandsp/g722.h>
#include <spandsp/plc.h>

#endif
