/* mlx5 CQE opcodes and error syndromes (docs/formats.md §5.2, §5.3) and send opcodes (§2.2). */
#ifndef FVSIM_SYND_H
#define FVSIM_SYND_H

enum {
	CQE_REQ = 0,
	CQE_RESP_WR_IMM = 1,
	CQE_RESP_SEND = 2,
	CQE_RESP_SEND_IMM = 3,
	CQE_RESP_SEND_INV = 4,
	CQE_REQ_ERR = 13,
	CQE_RESP_ERR = 14,
};

enum {
	SYND_OK = 0,
	SYND_LOC_LEN = 0x01,
	SYND_LOC_QP_OP = 0x02,
	SYND_LOC_PROT = 0x04,
	SYND_FLUSH = 0x05,
	SYND_MW_BIND = 0x06,
	SYND_BAD_RESP = 0x10,
	SYND_LOC_ACCESS = 0x11,
	SYND_REM_INV_REQ = 0x12,
	SYND_REM_ACCESS = 0x13,
	SYND_REM_OP = 0x14,
	SYND_RETRY_EXC = 0x15,
	SYND_RNR_EXC = 0x16,
};

enum {
	OP_NOP = 0x00,
	OP_SEND_INVAL = 0x01,
	OP_RDMA_WRITE = 0x08,
	OP_RDMA_WRITE_IMM = 0x09,
	OP_SEND = 0x0a,
	OP_SEND_IMM = 0x0b,
	OP_RDMA_READ = 0x10,
	OP_ATOMIC_CS = 0x11,
	OP_ATOMIC_FA = 0x12,
	OP_UMR = 0x25,
};

#define MLX5_INVALID_LKEY 0x100u
#define WQE_CE_MASK 0x0c
#define WQE_SOLICITED 0x02

#endif
