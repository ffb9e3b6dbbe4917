// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "nic.h"
#include "wire-format.h"

#include "ns3/mcsim/fabric-header.h"
#include "ns3/mcsim/port.h"
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
 * @brief A packet trace in a pcap file that Wireshark reads: the frames of NICs (each frame the NIC
 * sends and each that arrives for it) and of switch ports (each frame the port sends and each that
 * arrives at it), at their simulated times in nanoseconds, as the wire format carries them
 * (BuildWireFrame): native InfiniBand in ERF records of type InfiniBand (LINKTYPE_ERF: the
 * InfiniBand link type 247 is not decoded by the Wireshark of Debian 12), RoCEv2 as Ethernet
 * frames (LINKTYPE_ETHERNET). Written as the packets go (no Python per packet); MaxPackets and
 * MaxBytes cap the file (what is over is counted).
 */
class PcapWriter : public Object
{
  public:
    static TypeId GetTypeId();
    PcapWriter();
    ~PcapWriter() override;

    /**
     * Create the file and write its header.
     * @param format the frames' wire format (the NICs')
     * @param payload the packets carry their payload's bytes (verify mode): whole frames
     * @throws std::invalid_argument if it cannot be written
     */
    void Open(const std::string& path, WireFormat format, bool payload);
    /** Trace this NIC's frames, out and in. @throws std::invalid_argument for another format */
    void Attach(Ptr<Nic> nic);
    /** Trace a port's frames: those it sends, and those its link's far end (peer) sends to it. */
    void AttachPort(Ptr<Port> port, Ptr<Port> peer);
    /** Flush and close the file (after the run). */
    void Close();
    uint64_t GetWritten() const; //!< frames written
    uint64_t GetSkipped() const; //!< frames over a cap

  protected:
    void DoDispose() override;

  private:
    void OnRx(Ptr<const Packet> packet, const FabricHeader::Fields& f, uint32_t host, uint32_t qpn);
    void OnPort(Ptr<const Packet> packet,
                const FabricHeader::Fields& f,
                uint32_t node,
                uint32_t port);
    void Write(Ptr<const Packet> packet, const FabricHeader::Fields& f, uint32_t srcQpn);
    void WriteRecord(const std::vector<uint8_t>& frame, uint32_t wireBytes);

    std::ofstream m_out;
    std::string m_path;
    WireFormat m_format = WireFormat::INFINIBAND;
    bool m_payload = false;
    std::vector<uint8_t> m_data;  //!< a packet's payload (verify mode)
    std::vector<uint8_t> m_frame; //!< the frame being written
    uint64_t m_maxPackets;        //!< "MaxPackets" (0: no cap)
    uint64_t m_maxBytes;          //!< "MaxBytes" (0: no cap)
    uint64_t m_bytes = 0;
    uint64_t m_written = 0;
    uint64_t m_skipped = 0;
};

} // namespace mcsim
} // namespace ns3
