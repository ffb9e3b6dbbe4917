// SPDX-License-Identifier: GPL-2.0-only
#include "wire-format.h"

namespace ns3
{
namespace mcsim
{

Opcode
MessageOpcode(bool send, bool withImm, bool first, bool last)
{
    if (first && last)
    {
        return send ? (withImm ? Opcode::SEND_ONLY_IMM : Opcode::SEND_ONLY)
                    : (withImm ? Opcode::WRITE_ONLY_IMM : Opcode::WRITE_ONLY);
    }
    if (first)
    {
        return send ? Opcode::SEND_FIRST : Opcode::WRITE_FIRST;
    }
    if (last)
    {
        return send ? (withImm ? Opcode::SEND_LAST_IMM : Opcode::SEND_LAST)
                    : (withImm ? Opcode::WRITE_LAST_IMM : Opcode::WRITE_LAST);
    }
    return send ? Opcode::SEND_MIDDLE : Opcode::WRITE_MIDDLE;
}

Opcode
ReadResponseOpcode(bool first, bool last)
{
    return first && last ? Opcode::READ_RESPONSE_ONLY
           : first       ? Opcode::READ_RESPONSE_FIRST
           : last        ? Opcode::READ_RESPONSE_LAST
                         : Opcode::READ_RESPONSE_MIDDLE;
}

} // namespace mcsim
} // namespace ns3
