// Shims for OpenSSL 3: many calls are function-like macros over SSL_ctrl/BIO_ctrl
// (SSL_CTX_set_min_proto_version, BIO_set_retry_read, DTLSv1_get_timeout, ...) or
// variadic (EVP_EC_gen), so Swift cannot import them. Each wrapper below does one of them.
#ifndef CALLAUDIO_COPENSSL_SHIM_H
#define CALLAUDIO_COPENSSL_SHIM_H

#include <openssl/bio.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/time.h>

// Protocol versions, modes and options (macros over SSL_CTX_ctrl/SSL_ctrl, or SSL_OP_BIT expressions).
static inline int callaudio_ssl_ctx_set_min_proto_version(SSL_CTX *c, int v) { return (int)SSL_CTX_set_min_proto_version(c, v); }
static inline int callaudio_ssl_ctx_set_max_proto_version(SSL_CTX *c, int v) { return (int)SSL_CTX_set_max_proto_version(c, v); }
static inline void callaudio_ssl_ctx_disable_renegotiation(SSL_CTX *c) { SSL_CTX_set_options(c, SSL_OP_NO_RENEGOTIATION); }
static inline void callaudio_ssl_ctx_set_max_cert_list(SSL_CTX *c, long bytes) { SSL_CTX_set_max_cert_list(c, bytes); }
static inline void callaudio_ssl_set_no_query_mtu(SSL *s) { SSL_set_options(s, SSL_OP_NO_QUERY_MTU); }
static inline int callaudio_ssl_set_mtu(SSL *s, long mtu) { return (int)SSL_set_mtu(s, mtu); }
static inline int callaudio_ssl_set_tlsext_host_name(SSL *s, const char *name) { return (int)SSL_set_tlsext_host_name(s, name); }
static inline const char *callaudio_ssl_get_cipher_name(const SSL *s) { return SSL_get_cipher_name(s); }

// DTLS retransmission timer: the time left in microseconds (returns 0 when no timer runs).
static inline int callaudio_dtls_get_timeout(SSL *s, long long *microseconds) {
    struct timeval tv;
    if (DTLSv1_get_timeout(s, &tv) <= 0) return 0;
    *microseconds = (long long)tv.tv_sec * 1000000 + tv.tv_usec;
    return 1;
}
static inline int callaudio_dtls_handle_timeout(SSL *s) { return (int)DTLSv1_handle_timeout(s); }

/* DTLS retransmission from 100 ms, doubling to 60 s: OpenSSL's own first wait is 1 s, so one
   lost ClientHello (say, one sent before the peer's media socket exists) would stall a call's
   media for a second. A C function because the timer callback is a plain function pointer. */
static unsigned int callaudio_dtls_timer(SSL *s, unsigned int timer_us) {
    (void)s;
    if (timer_us == 0) return 100000;
    return timer_us >= 30000000 ? 60000000 : timer_us * 2;
}
static inline void callaudio_dtls_set_fast_timer(SSL *s) { DTLS_set_timer_cb(s, callaudio_dtls_timer); }

// BIO flags and memory data (macros over BIO_set_flags/BIO_ctrl).
static inline void callaudio_bio_set_retry_read(BIO *b) { BIO_set_retry_read(b); }
static inline void callaudio_bio_clear_retry_flags(BIO *b) { BIO_clear_retry_flags(b); }
static inline long callaudio_bio_get_mem_data(BIO *b, char **p) { return BIO_get_mem_data(b, p); }

// Error codes (ERR_PACK is a macro; ERR_GET_* are kept beside it for symmetry).
static inline unsigned long callaudio_err_pack(int lib, int reason) { return ERR_PACK(lib, 0, reason); }
static inline int callaudio_err_get_lib(unsigned long e) { return ERR_GET_LIB(e); }
static inline int callaudio_err_get_reason(unsigned long e) { return ERR_GET_REASON(e); }

// Keys and certificates: EVP_EC_gen is a macro over the variadic EVP_PKEY_Q_keygen;
// X509V3_set_ctx_nodb is a macro; MBSTRING_UTF8 an expression.
static inline EVP_PKEY *callaudio_ec_p256_generate(void) { return EVP_EC_gen("P-256"); }
static inline int callaudio_x509_name_add_text(X509_NAME *n, const char *field, const char *value) {
    return X509_NAME_add_entry_by_txt(n, field, MBSTRING_UTF8, (const unsigned char *)value, -1, -1, 0);
}
static inline int callaudio_x509_add_extension(X509 *x, int nid, const char *value) {
    X509V3_CTX ctx;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, x, x, NULL, NULL, 0);
    X509_EXTENSION *ext = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
    if (ext == NULL) return 0;
    int ok = X509_add_ext(x, ext, -1);
    X509_EXTENSION_free(ext);
    return ok;
}

#endif
