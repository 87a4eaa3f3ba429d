// Shims for glibc's stub resolver (libresolv): res_ninit, res_nquery, res_nclose and dn_expand
// are macros over __-prefixed names, the ns_msg/ns_rr accessors are macros, and the name-server
// list lives in a struct with a union and bit-fields. Each wrapper below does one of them.
#ifndef CALLAUDIO_CRESOLV_SHIM_H
#define CALLAUDIO_CRESOLV_SHIM_H

#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <arpa/nameser.h>
#include <netdb.h>
#include <resolv.h>
#include <stdlib.h>
#include <string.h>

// A resolver state on the heap (its layout is glibc's business), initialised from
// /etc/resolv.conf. NULL when out of memory or when res_ninit fails.
static inline struct __res_state *callaudio_res_new(void) {
    struct __res_state *s = calloc(1, sizeof *s);
    if (s == NULL) return NULL;
    if (res_ninit(s) != 0) { res_nclose(s); free(s); return NULL; }
    return s;
}

// Closes the state's sockets, frees what glibc (or callaudio_res_add_server) allocated, then the state.
static inline void callaudio_res_free(struct __res_state *s) {
    if (s == NULL) return;
    res_nclose(s);
    free(s);
}

// Seconds per try and tries per server; RES_IGNTC keeps a truncated UDP answer rather than
// retrying over TCP, whose connect and read glibc does without a timeout (time stays bounded);
// EDNS0 lets a UDP answer carry up to 1,200 bytes instead of 512.
static inline void callaudio_res_set_timing(struct __res_state *s, int seconds, int attempts) {
    s->retrans = seconds;
    s->retry = attempts;
    s->options |= RES_IGNTC | RES_USE_EDNS0;
}

// Forgets the name servers from /etc/resolv.conf (res_nclose frees glibc's IPv6 copies).
static inline void callaudio_res_clear_servers(struct __res_state *s) {
    res_nclose(s);
    for (int i = 0; i < MAXNS; i++) {
        s->_u._ext.nsaddrs[i] = NULL;
        s->_u._ext.nssocks[i] = -1;
    }
    // Zero, so res_send builds its private copy of the list afresh instead of comparing with the old one.
    s->_u._ext.nscount = 0;
    s->nscount = 0;
}

// Appends a name server: a numeric IPv4 or IPv6 host and its port. IPv4 goes into nsaddr_list;
// IPv6 does not fit a sockaddr_in, so, as res_ninit does for resolv.conf, the slot's family is
// left 0 and a malloc'd sockaddr_in6 goes into _u._ext.nsaddrs (freed by res_nclose).
// Returns 0, or -1 for a full list, a host that is not numeric, or no memory.
static inline int callaudio_res_add_server(struct __res_state *s, const char *host, unsigned short port) {
    int i = s->nscount;
    if (i < 0 || i >= MAXNS) return -1;
    struct in_addr v4;
    struct in6_addr v6;
    memset(&s->nsaddr_list[i], 0, sizeof s->nsaddr_list[i]);
    if (inet_pton(AF_INET, host, &v4) == 1) {
        s->nsaddr_list[i].sin_family = AF_INET;
        s->nsaddr_list[i].sin_port = htons(port);
        s->nsaddr_list[i].sin_addr = v4;
    } else if (inet_pton(AF_INET6, host, &v6) == 1) {
        struct sockaddr_in6 *a = calloc(1, sizeof *a);
        if (a == NULL) return -1;
        a->sin6_family = AF_INET6;
        a->sin6_port = htons(port);
        a->sin6_addr = v6;
        s->_u._ext.nsaddrs[i] = a;
    } else {
        return -1;
    }
    s->_u._ext.nssocks[i] = -1;
    s->nscount = i + 1;
    return 0;
}

// One query for exactly `name` (no search list), class IN. Returns the answer's length, or -1
// with the reason in callaudio_res_h_errno (the answer's header is still in `answer` when a
// server sent one: the rcode tells NXDOMAIN, SERVFAIL and REFUSED apart).
static inline int callaudio_res_query(struct __res_state *s, const char *name, int type,
                                      unsigned char *answer, int length) {
    return res_nquery(s, name, ns_c_in, type, answer, length);
}
static inline int callaudio_res_h_errno(const struct __res_state *s) { return s->res_h_errno; }

// Message parsing: ns_initparse checks that every section's records fit the message.
static inline int callaudio_ns_initparse(const unsigned char *message, int length, ns_msg *handle) {
    return ns_initparse(message, length, handle);
}
static inline int callaudio_ns_msg_rcode(const ns_msg *handle) { return ns_msg_getflag(*handle, ns_f_rcode); }
static inline int callaudio_ns_msg_answer_count(const ns_msg *handle) { return ns_msg_count(*handle, ns_s_an); }

// Answer record `index`: type, class, rdata. Returns 0, or -1 when the record does not parse
// (ns_parserr expands its owner name with dn_expand, which refuses compression loops).
static inline int callaudio_ns_answer(ns_msg *handle, int index, int *type, int *rrclass,
                                      const unsigned char **rdata, int *rdlength) {
    ns_rr rr;
    if (ns_parserr(handle, ns_s_an, index, &rr) != 0) return -1;
    *type = ns_rr_type(rr);
    *rrclass = ns_rr_class(rr);
    *rdata = ns_rr_rdata(rr);
    *rdlength = ns_rr_rdlen(rr);
    return 0;
}
static inline const unsigned char *callaudio_ns_msg_base(const ns_msg *handle) { return ns_msg_base(*handle); }
static inline const unsigned char *callaudio_ns_msg_end(const ns_msg *handle) { return ns_msg_end(*handle); }

// Expands the (possibly compressed) name at `source` into `name`; returns the bytes it took at
// `source`, or -1 (a pointer outside the message, a loop, a name over `size`).
static inline int callaudio_dn_expand(const unsigned char *message, const unsigned char *end,
                                      const unsigned char *source, char *name, int size) {
    return dn_expand(message, end, source, name, size);
}

// getaddrinfo's "the name has no address (of that family)": GNU extensions, hidden without _GNU_SOURCE.
#ifndef EAI_NODATA
#define EAI_NODATA -5
#endif
#ifndef EAI_ADDRFAMILY
#define EAI_ADDRFAMILY -9
#endif
static inline int callaudio_eai_nodata(void) { return EAI_NODATA; }
static inline int callaudio_eai_addrfamily(void) { return EAI_ADDRFAMILY; }

#endif
