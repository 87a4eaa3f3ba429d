// libsrtp2 (Debian's build, over NSS). Swift imports every function, struct, enum and constant
// the SRTP module uses as they are, so there is no wrapper here yet: the one function-like macro
// it would need, srtp_crypto_policy_set_aes_cm_128_hmac_sha1_80, is avoided by setting policies
// with srtp_crypto_policy_set_from_profile_for_rtp/_rtcp. A wrapper added later is a static
// inline function prefixed csrtp_, with a comment saying what Swift cannot import.
#ifndef CALLAUDIO_CSRTP_SHIM_H
#define CALLAUDIO_CSRTP_SHIM_H

#include <srtp2/srtp.h>

#endif
