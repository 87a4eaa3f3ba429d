// SpeexDSP headers for Swift. `speex_echo_ctl`, `speex_preprocess_ctl` and the
// integer request constants import directly; the shims below only give the
// void*-typed ctl calls a typed argument so Swift call sites stay readable.
#ifndef CALLAUDIO_CSPEEXDSP_SHIM_H
#define CALLAUDIO_CSPEEXDSP_SHIM_H

#include <speex/speex_echo.h>
#include <speex/speex_preprocess.h>
#include <speex/speex_resampler.h>

static inline int callaudio_speex_echo_set_int(SpeexEchoState *st, int request, spx_int32_t value) {
    return speex_echo_ctl(st, request, &value);
}
static inline int callaudio_speex_echo_get_int(SpeexEchoState *st, int request, spx_int32_t *value) {
    return speex_echo_ctl(st, request, value);
}
static inline int callaudio_speex_preprocess_set_int(SpeexPreprocessState *st, int request, spx_int32_t value) {
    return speex_preprocess_ctl(st, request, &value);
}
static inline int callaudio_speex_preprocess_get_int(SpeexPreprocessState *st, int request, spx_int32_t *value) {
    return speex_preprocess_ctl(st, request, value);
}
// SPEEX_PREPROCESS_SET_ECHO_STATE takes the echo state itself, not a pointer to a value.
static inline int callaudio_speex_preprocess_set_echo_state(SpeexPreprocessState *st, SpeexEchoState *echo) {
    return speex_preprocess_ctl(st, SPEEX_PREPROCESS_SET_ECHO_STATE, echo);
}

#endif
