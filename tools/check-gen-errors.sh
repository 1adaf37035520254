#!/bin/sh
# The generator must refuse a broken table: each case below breaks a copy of ops.def in one
# place (a sed script); gen-ops must exit non-zero, write nothing to stdout and name the
# broken line as "ops.def:LINE: message". The table itself must pass.
set -u
gen=$1; table=$2; passed=0; failed=0
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$gen" "$table" >/dev/null || { echo "check-gen-errors: $table itself is refused"; exit 1; }

# check NAME SED-SCRIPT MARK MESSAGE: MARK (a fixed string) finds the broken line in the copy.
check() {
    name=$1; script=$2; mark=$3; msg=$4
    bad=$tmp/ops.def
    sed -e "$script" "$table" > "$bad"
    line=$(grep -nF -- "$mark" "$bad" | tail -n 1 | cut -d: -f1)
    if [ -z "$line" ] || cmp -s "$bad" "$table"; then
        echo "check-gen-errors: $name: FAIL (the case does not change the table)"; failed=$((failed + 1)); return
    fi
    "$gen" "$bad" > "$tmp/out" 2> "$tmp/err"; rc=$?
    want="ops.def:$line: $msg"
    if [ $rc -eq 0 ] || [ -s "$tmp/out" ] || ! grep -qF -- "$want" "$tmp/err"; then
        echo "check-gen-errors: $name: FAIL (exit $rc, want '$want', got:)"; sed 's/^/    /' "$tmp/err"
        failed=$((failed + 1)); return
    fi
    passed=$((passed + 1))
}

check remote-typo     's/MLX5_OPCODE_RDMA_WRITE,     RADDR/MLX5_OPCODE_RDMA_WRITE,     RADR/' \
      'RADR,' "unknown remote 'RADR'"
check imm-typo        's/MLX5_OPCODE_SEND_IMM,       NONE,  IMM,/MLX5_OPCODE_SEND_IMM,       NONE,  IM,/' \
      'IM, ' "unknown immediate 'IM'"
check payload-typo    's/MLX5_OPCODE_RDMA_READ,      RADDR, NONE, SGL,/MLX5_OPCODE_RDMA_READ,      RADDR, NONE, SG,/' \
      'SG, ' "unknown payload 'SG'"
check dest-typo       's/IBV_QPT_UD,       AV)/IBV_QPT_UD,       ADDR)/' 'ADDR)' "unknown destination 'ADDR'"
check mlx5-opcode     's/MLX5_OPCODE_ATOMIC_FA,/MLX5_ATOMIC_FA,/' 'MLX5_ATOMIC_FA' \
      "bad mlx5 opcode 'MLX5_ATOMIC_FA': want MLX5_OPCODE_"
check duplicate-op    '/^FV__OP(read,/p' 'FV__OP(read,' "duplicate operation 'read'"
check duplicate-qpt   '/^FV__QPT(uc,/p' 'FV__QPT(uc,' "duplicate QP type 'uc'"
check duplicate-pair  's/FV__ALLOW(ud, nop)/FV__ALLOW(ud, nop) FV__ALLOW(ud, send)/' 'FV__ALLOW(ud, nop) FV__ALLOW' \
      "duplicate pair (ud, send)"
check tso-not-eth     's/FV__ALLOW(ud, nop)/FV__ALLOW(ud, nop) FV__ALLOW(ud, send_tso)/' 'FV__ALLOW(ud, send_tso)' \
      "pair (ud, send_tso): TSO needs an Ethernet QP type"
check eth-write       's/FV__ALLOW(raw, send)/FV__ALLOW(raw, send) FV__ALLOW(raw, write)/' 'FV__ALLOW(raw, write)' \
      "pair (raw, write): an Ethernet QP type takes only SEND and TSO with DATA"
check eth-imm         's/FV__ALLOW(raw, send)/FV__ALLOW(raw, send) FV__ALLOW(raw, send_imm)/' 'FV__ALLOW(raw, send_imm)' \
      "pair (raw, send_imm): an Ethernet QP type takes only SEND and TSO with DATA"
check unknown-qpt     's/FV__ALLOW(ud, nop)/FV__ALLOW(udp, nop)/' 'FV__ALLOW(udp' "pair names unknown QP type 'udp'"
check unknown-op      's/FV__ALLOW(uc, write)/FV__ALLOW(uc, wirte)/' 'wirte' "pair names unknown operation 'wirte'"
check unknown-row     's/FV__ALLOW(rc, cas)/FV_ALOW(rc, cas)/' 'FV_ALOW' "unknown row 'FV_ALOW'"
check short-row       's/FV__ALLOW(rc, fadd)/FV__ALLOW(rc)/' 'FV__ALLOW(rc)' "FV__ALLOW row has 1 columns, wants 2"
check bad-name        's/FV__ALLOW(xrc, read)/FV__ALLOW(xrc, re-ad)/' 're-ad' "FV__ALLOW row: column 2 're-ad' is not a name"
check desc-not-string 's/"RDMA READ into the SGEs"/RDMA_READ/' 'RDMA_READ)' "description must be a string"
check open-comment    's|^/\* FV__ALLOW(qp type|/* open FV__ALLOW(qp type|; s|all others are refused. \*/|all others are refused.|' \
      '/* open' "unterminated comment"
check wr-repeated     's/^FV__OP(send_imm,  send_imm,/FV__OP(send_imm,  send,/' 'FV__OP(send_imm,  send,' \
      "operation 'send_imm' repeats fv_wr_send"
check wr-no-payload   's/^FV__OP(nop,       NONE,/FV__OP(nop,       nop,/' 'FV__OP(nop,       nop,' \
      "operation 'nop': an fv_wr_* builder needs a payload"
check wr-umr-payload  's/MLX5_OPCODE_UMR,            BIND,  NONE, NONE,/MLX5_OPCODE_UMR,            BIND,  NONE, SGL,/' \
      'BIND,  NONE, SGL,' "operation 'bind_mw': a memory-window operation takes no payload"
check wr-linv-imm     's/MLX5_OPCODE_UMR,            LINV,  INV, /MLX5_OPCODE_UMR,            LINV,  IMM, /' \
      'LINV,  IMM,' "operation 'local_inv': LINV needs the immediate INV (the key to invalidate)"
check wr-bind-imm     's/MLX5_OPCODE_UMR,            BIND,  NONE,/MLX5_OPCODE_UMR,            BIND,  IMM, /' \
      'BIND,  IMM,' "operation 'bind_mw': BIND takes no immediate"
check wr-opcode       's/IBV_WR_RDMA_READ, /IBV_WR_RDMA_REED, /' 'IBV_WR_RDMA_REED' \
      "verbs opcode 'IBV_WR_RDMA_REED' has no slot in fv__op_table"
check wc-typo         's/DATA, RDMA_WRITE, "RDMA WRITE"/DATA, RDMA_WRTE, "RDMA WRITE"/' 'RDMA_WRTE' \
      "unknown completion 'RDMA_WRTE'"
check wc-by-wqe       's/SGL,  RDMA_READ,  "RDMA READ/SGL,  BY_WQE,  "RDMA READ/' 'BY_WQE,  "RDMA READ' \
      "operation 'read': completion BY_WQE is for the memory-window rows, and only them"
check wc-shared       's/LINV,  INV,  NONE, BY_WQE, /LINV,  INV,  NONE, SEND, /' 'LINV,  INV,  NONE, SEND,' \
      "operation 'local_inv': completion BY_WQE is for the memory-window rows, and only them"
check wc-disagree     's/FV__WR_NONE,                  MLX5_OPCODE_NOP, /FV__WR_NONE,                  MLX5_OPCODE_RDMA_WRITE,/' \
      'FV__WR_NONE,                  MLX5_OPCODE_RDMA_WRITE,' \
      "operation 'nop' shares MLX5_OPCODE_RDMA_WRITE with 'write' but not its completion"
check mlx5-unknown    's/MLX5_OPCODE_NOP, /MLX5_OPCODE_NOOP,/' 'MLX5_OPCODE_NOOP' \
      "mlx5 opcode 'MLX5_OPCODE_NOOP' is not one the generator knows"
check av-remote       's/FV__ALLOW(ud, nop)/FV__ALLOW(ud, nop) FV__ALLOW(ud, write)/' 'FV__ALLOW(ud, write)' \
      "pair (ud, write): an AV QP type takes no remote segment"
check dc-twice        's/^FV__QPT(xrc, FV_QPT_XRC, IBV_QPT_XRC_SEND, SRQN)/FV__QPT(xrc, FV_QPT_XRC, IBV_QPT_XRC_SEND, DC)/' \
      'FV__QPT(dci,' "QP type 'dci': a second DC QP type ('xrc' is one)"
check dc-no-av        's/^FV__QPT(ud,  FV_QPT_UD,  IBV_QPT_UD,       AV)/FV__QPT(ud,  FV_QPT_UD,  IBV_QPT_UD,       NONE)/' \
      'FV__QPT(dci,' "QP type 'dci': a DC QP type needs an AV one before it"
check stray-text      's/^FV__QPT(rc, /x FV__QPT(rc, /' 'x FV__QPT(rc,' "expected '(' after 'x'"

echo "check-gen-errors: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
