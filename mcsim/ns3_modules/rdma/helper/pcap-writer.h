// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "nic.h"

#include "ns3/mcsim/fabric-header.h"
#include "ns3/object.h"
#include "ns3/packet.h"

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

namespace ns3
{
namespace mcsim
{

/**
 * The captured bytes of one native InfiniBand frame as the model sent it: LRH, GRH (multicast),
 * BTH, then RETH, AETH, DETH and ImmDt as the opcode has them, with the model's field values
 * (InfiniBand Architecture Specification vol. 1, chapters 7 and 9). The payload is not carried
 * (the frame is truncated after its headers); wireBytes is the frame's length on the wire: the
 * headers, the payload padded to 4 bytes, ICRC and VCRC.
 * @param srcQpn the sending QP (DETH of a datagram)
 */
std::vector<uint8_t> InfinibandFrame(const FabricHeader::Fields& fields,
                                     uint32_t payloadBytes,
                                     uint32_t srcQpn,
                                     uint32_t& wireBytes);

/**
 * @brief A packet trace of one or more NICs in a pcap file that Wireshark reads: each frame the
 * NIC sends (Tx) and each frame that arrives for it (Rx), at its simulated time in nanoseconds,
 * as native InfiniBand (InfinibandFrame) in an ERF record of type InfiniBand (LINKTYPE_ERF: the
 * InfiniBand link type 247 is not decoded by the Wireshark of Debian 12). Written as the packets
 * go (no Python per packet); MaxPackets and MaxBytes cap the file (what is over is counted).
 */
class PcapWriter : public Object
{
  public:
    static TypeId GetTypeId();
    PcapWriter();
    ~PcapWriter() override;

    /** Create the file and write its header. @throws std::invalid_argument if it cannot be written
     */
    void Open(const std::string& path);
    /** Trace this NIC's frames, out and in. */
    void Attach(Ptr<Nic> nic);
    /** Flush and close the file (after the run). */
    void Close();
    uint64_t GetWritten() const; //!< frames written
    uint64_t GetSkipped() const; //!< frames over a cap

  protected:
    void DoDispose() override;

  private:
    void OnTx(Ptr<const Packet> packet, const FabricHeader::Fields& f, uint32_t host, uint32_t qpn);
    void OnRx(Ptr<const Packet> packet, const FabricHeader::Fields& f, uint32_t host, uint32_t qpn);
    void Write(const FabricHeader::Fields& f, uint32_t packetBytes, uint32_t srcQpn);

    std::ofstream m_out;
    std::string m_path;
    uint64_t m_maxPackets; //!< "MaxPackets" (0: no cap)
    uint64_t m_maxBytes;   //!< "MaxBytes" (0: no cap)
    uint64_t m_bytes = 0;
    uint64_t m_written = 0;
    uint64_t m_skipped = 0;
};

} // namespace mcsim
} // namespace ns3
