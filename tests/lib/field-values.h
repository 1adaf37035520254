/* Recognisable field values for the WQE byte tests: every byte differs, so a swapped or
 * shifted field shows. */
#ifndef TESTS_FIELD_VALUES_H
#define TESTS_FIELD_VALUES_H

#define QPN      0x0abcdeu
#define LKEY     0xc1c2c3c0u
#define RADDR    0xa1a2a3a4a5a6a7a8ull
#define RKEY     0xb1b2b3b4u
#define INV_RKEY 0x98765432u
#define COMPARE  0x1112131415161718ull
#define SWAP     0x2122232425262728ull
#define ADD      0x3132333435363738ull
#define SRQN     0x00d1d2d3u
#define RQPN     0x00e1e2e3u
#define QKEY     0xf1f2f3f4u

#endif
