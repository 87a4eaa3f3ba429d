// Shims for libopus: the `*_ctl` calls are variadic and the request macros
// (OPUS_SET_BITRATE, ...) are function-like, so Swift cannot import them.
// Each wrapper below does one request with the right argument type.
#ifndef CALLAUDIO_COPUS_SHIM_H
#define CALLAUDIO_COPUS_SHIM_H

#include <opus.h>

// Encoder setters.
static inline int callaudio_opus_set_bitrate(OpusEncoder *e, opus_int32 v) { return opus_encoder_ctl(e, OPUS_SET_BITRATE(v)); }
static inline int callaudio_opus_set_complexity(OpusEncoder *e, opus_int32 v) { return opus_encoder_ctl(e, OPUS_SET_COMPLEXITY(v)); }
static inline int callaudio_opus_set_vbr(OpusEncoder *e, opus_int32 v) { return opus_encoder_ctl(e, OPUS_SET_VBR(v)); }
static inline int callaudio_opus_set_vbr_constraint(OpusEncoder *e, opus_int32 v) { return opus_encoder_ctl(e, OPUS_SET_VBR_CONSTRAINT(v)); }
static inline int callaudio_opus_set_inband_fec(OpusEncoder *e, opus_int32 v) { return opus_encoder_ctl(e, OPUS_SET_INBAND_FEC(v)); }
static inline int callaudio_opus_set_packet_loss_perc(OpusEncoder *e, opus_int32 v) { return opus_encoder_ctl(e, OPUS_SET_PACKET_LOSS_PERC(v)); }
static inline int callaudio_opus_set_dtx(OpusEncoder *e, opus_int32 v) { return opus_encoder_ctl(e, OPUS_SET_DTX(v)); }
static inline int callaudio_opus_set_signal(OpusEncoder *e, opus_int32 v) { return opus_encoder_ctl(e, OPUS_SET_SIGNAL(v)); }
static inline int callaudio_opus_set_max_bandwidth(OpusEncoder *e, opus_int32 v) { return opus_encoder_ctl(e, OPUS_SET_MAX_BANDWIDTH(v)); }

// Encoder getters.
static inline int callaudio_opus_get_bitrate(OpusEncoder *e, opus_int32 *v) { return opus_encoder_ctl(e, OPUS_GET_BITRATE(v)); }
static inline int callaudio_opus_get_complexity(OpusEncoder *e, opus_int32 *v) { return opus_encoder_ctl(e, OPUS_GET_COMPLEXITY(v)); }
static inline int callaudio_opus_get_vbr(OpusEncoder *e, opus_int32 *v) { return opus_encoder_ctl(e, OPUS_GET_VBR(v)); }
static inline int callaudio_opus_get_vbr_constraint(OpusEncoder *e, opus_int32 *v) { return opus_encoder_ctl(e, OPUS_GET_VBR_CONSTRAINT(v)); }
static inline int callaudio_opus_get_inband_fec(OpusEncoder *e, opus_int32 *v) { return opus_encoder_ctl(e, OPUS_GET_INBAND_FEC(v)); }
static inline int callaudio_opus_get_packet_loss_perc(OpusEncoder *e, opus_int32 *v) { return opus_encoder_ctl(e, OPUS_GET_PACKET_LOSS_PERC(v)); }
static inline int callaudio_opus_get_dtx(OpusEncoder *e, opus_int32 *v) { return opus_encoder_ctl(e, OPUS_GET_DTX(v)); }
static inline int callaudio_opus_get_signal(OpusEncoder *e, opus_int32 *v) { return opus_encoder_ctl(e, OPUS_GET_SIGNAL(v)); }
static inline int callaudio_opus_get_max_bandwidth(OpusEncoder *e, opus_int32 *v) { return opus_encoder_ctl(e, OPUS_GET_MAX_BANDWIDTH(v)); }
static inline int callaudio_opus_get_lookahead(OpusEncoder *e, opus_int32 *v) { return opus_encoder_ctl(e, OPUS_GET_LOOKAHEAD(v)); }
static inline int callaudio_opus_get_in_dtx(OpusEncoder *e, opus_int32 *v) { return opus_encoder_ctl(e, OPUS_GET_IN_DTX(v)); }
static inline int callaudio_opus_encoder_reset(OpusEncoder *e) { return opus_encoder_ctl(e, OPUS_RESET_STATE); }

// Decoder requests.
static inline int callaudio_opus_decoder_get_last_packet_duration(OpusDecoder *d, opus_int32 *v) { return opus_decoder_ctl(d, OPUS_GET_LAST_PACKET_DURATION(v)); }
static inline int callaudio_opus_decoder_set_gain(OpusDecoder *d, opus_int32 v) { return opus_decoder_ctl(d, OPUS_SET_GAIN(v)); }
static inline int callaudio_opus_decoder_get_gain(OpusDecoder *d, opus_int32 *v) { return opus_decoder_ctl(d, OPUS_GET_GAIN(v)); }
static inline int callaudio_opus_decoder_reset(OpusDecoder *d) { return opus_decoder_ctl(d, OPUS_RESET_STATE); }

#endif
