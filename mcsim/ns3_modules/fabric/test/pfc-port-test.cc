// SPDX-License-Identifier: GPL-2.0-only
//
// PfcPort stands alone: two of them, one per direction of a link, driven by hand (no Port, no
// fabric), against the closed forms of fabric/doc/fabric.md, "Priority Flow Control". Part of the
// suite "mcsim-fabric" (fabric-test-suite.cc).

#include "pfc-port-test.h"

#include "ns3/callback.h"
#include "ns3/mcsim/pfc-port.h"
#include "ns3/mcsim/port-queue.h"
#include "ns3/simulator.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <vector>

namespace ns3
{
namespace mcsim
{
namespace
{

constexpr uint64_t RATE_BPS = 100000000000ULL;      //!< 100 Gbit/s, no line code
constexpr int64_t DELAY_PS = 1000000;               //!< 1 us: 200 m of fibre
constexpr uint32_t HEADER_B = 20;                   //!< RoCEv2's preamble, SFD and gap
constexpr uint32_t MAX_FRAME_B = 4112;              //!< PfcMaxFrameBytes: 4 KiB + 16
constexpr uint32_t WIRE_B = MAX_FRAME_B + HEADER_B; //!< a largest data frame on the wire
constexpr uint64_t BUFFER_B = 256 * 1024;           //!< the ingress buffer
constexpr uint64_t OFFSET_B = 8192;                 //!< PfcResumeOffsetBytes
constexpr int64_t FRAME_TX_PS = 6720;               //!< a PFC frame: (64 + 20) B * 8 / 100 Gbit/s
/** 2 largest frames + the PFC frame + a delay of bytes each way: 1 us at 100G is 12,500 B. */
constexpr uint64_t HEADROOM_B = 2 * WIRE_B + 64 + HEADER_B + 2 * 12500;
constexpr int64_t PAUSE_PS = 335539200;   //!< 65535 quanta * 512 bits / 100 Gbit/s
constexpr int64_t REFRESH_PS = 167767040; //!< 32767 quanta (half of them) * 512 bits / 100 Gbit/s

/** A port as its PfcPort sees it: the wire its PFC frames take, and the drains it is asked for. */
class HandPort : public PfcTransmitter
{
  public:
    Time StartPfcFrame(Time tx) override
    {
        const Time start = std::max(Simulator::Now(), m_busyUntil);
        m_busyUntil = start + tx;
        return start;
    }

    void PfcDrain() override
    {
        drains.push_back(Simulator::Now().GetPicoSeconds());
    }

    std::vector<int64_t> drains; //!< when PfcDrain was called, ps

  private:
    Time m_busyUntil;
};

/** A PFC frame as a trace source reported it: when, and its pause time in quanta. */
struct Frame
{
    int64_t ps;
    uint32_t quanta;
};

/**
 * One link's two directions by hand: `up` sends to `down`'s node, whose ingress is down.pfc's (it
 * pauses up); each side's frames, as its "PfcTx" and "PfcRx" report them.
 */
struct Side
{
    HandPort port;
    PortQueue queue;
    PfcPort::FrameTrace txTrace;
    PfcPort::FrameTrace rxTrace;
    PfcPort pfc{&port, &queue, &txTrace, &rxTrace};
    std::vector<Frame> sent;
    std::vector<Frame> received;

    void Tx(uint32_t, uint32_t, uint32_t quanta)
    {
        sent.push_back({Simulator::Now().GetPicoSeconds(), quanta});
    }

    void Rx(uint32_t, uint32_t, uint32_t quanta)
    {
        received.push_back({Simulator::Now().GetPicoSeconds(), quanta});
    }
};

struct Link
{
    Side up;   //!< node 0 port 0: sends the data
    Side down; //!< node 1 port 0: its ingress takes up's data and pauses up
};

/** A link with these settings on both sides, connected (100G, 1 us, 256 KiB buffers). */
std::unique_ptr<Link>
MakeLink(const PfcPort::Settings& settings)
{
    auto link = std::make_unique<Link>();
    Side* sides[2] = {&link->up, &link->down};
    for (uint32_t i = 0; i < 2; ++i)
    {
        Side& s = *sides[i];
        s.txTrace.ConnectWithoutContext(MakeCallback(&Side::Tx, &s));
        s.rxTrace.ConnectWithoutContext(MakeCallback(&Side::Rx, &s));
        s.pfc.GetSettings() = settings;
        s.pfc.Place(i, 0);
        s.pfc.SetReverse(&sides[1 - i]->pfc);
    }
    for (Side* s : sides)
    {
        s->pfc.Connect(BUFFER_B,
                       PicoSeconds(DELAY_PS),
                       HEADER_B,
                       RATE_BPS,
                       PicoSeconds(FRAME_TX_PS));
    }
    return link;
}

PfcPort::Settings
Defaults()
{
    PfcPort::Settings s;
    s.resumeOffset = OFFSET_B;
    s.maxFrameBytes = MAX_FRAME_B;
    return s;
}

class PfcThresholdsTestCase : public TestCase
{
  public:
    PfcThresholdsTestCase()
        : TestCase("PfcPort: headroom, XOFF and XON in force are their closed forms")
    {
    }

  private:
    void DoRun() override
    {
        auto link = MakeLink(Defaults());
        const PfcPort& pfc = link->down.pfc;
        NS_TEST_ASSERT_MSG_EQ(pfc.GetHeadroomBytes(),
                              HEADROOM_B,
                              "2 frames + PFC frame + 2 delays");
        NS_TEST_ASSERT_MSG_EQ(pfc.GetHeadroomBytes(), 33348, "the numbers: 8264 + 84 + 25000 B");
        NS_TEST_ASSERT_MSG_EQ(
            PfcPort::ComputedHeadroom(MAX_FRAME_B, HEADER_B, MicroSeconds(1), 1600000000000ULL),
            2 * WIRE_B + 84 + 2 * 200000,
            "1 us at 1.6 Tbit/s is 200,000 B each way");
        NS_TEST_ASSERT_MSG_EQ(pfc.GetXoffBytes(),
                              BUFFER_B - HEADROOM_B,
                              "XOFF: the buffer less the headroom");
        NS_TEST_ASSERT_MSG_EQ(pfc.GetXonBytes(),
                              BUFFER_B - HEADROOM_B - OFFSET_B,
                              "XON: the offset below");
        NS_TEST_ASSERT_MSG_EQ(pfc.QuantaTime(pfc::MAX_QUANTA).GetPicoSeconds(),
                              PAUSE_PS,
                              "a pause");

        PfcPort::Settings given = Defaults();
        given.xoffConfig = 100000;
        given.headroomBytes = 50000;
        auto set = MakeLink(given);
        NS_TEST_ASSERT_MSG_EQ(set->down.pfc.GetHeadroomBytes(), 50000, "PfcHeadroomBytes wins");
        NS_TEST_ASSERT_MSG_EQ(set->down.pfc.GetXoffBytes(), 100000, "PfcXoffBytes wins");

        CheckRefused(&link->up.pfc);
    }

    /** Connect refuses a PfcPort without a reverse, and one whose buffer is just its headroom. */
    void CheckRefused(PfcPort* reverse)
    {
        HandPort port;
        PortQueue queue;
        PfcPort::FrameTrace tx;
        PfcPort::FrameTrace rx;
        PfcPort alone(&port, &queue, &tx, &rx);
        alone.GetSettings() = Defaults();
        bool threw = false;
        try
        {
            alone.Connect(BUFFER_B,
                          PicoSeconds(DELAY_PS),
                          HEADER_B,
                          RATE_BPS,
                          PicoSeconds(FRAME_TX_PS));
        }
        catch (const std::invalid_argument&)
        {
            threw = true;
        }
        NS_TEST_ASSERT_MSG_EQ(threw, true, "no reverse: refused");
        alone.SetReverse(reverse);
        threw = false;
        try
        {
            alone.Connect(HEADROOM_B,
                          PicoSeconds(DELAY_PS),
                          HEADER_B,
                          RATE_BPS,
                          PicoSeconds(FRAME_TX_PS));
        }
        catch (const std::invalid_argument&)
        {
            threw = true;
        }
        NS_TEST_ASSERT_MSG_EQ(threw, true, "a buffer of just the headroom: refused");
    }
};

class PfcXoffXonTestCase : public TestCase
{
  public:
    PfcXoffXonTestCase()
        : TestCase("PfcPort: XOFF past XOFF, XON at XON, drops past the headroom, the peer paused")
    {
    }

  private:
    void DoRun() override
    {
        auto link = MakeLink(Defaults());
        PfcPort& down = link->down.pfc;
        const uint64_t xoff = down.GetXoffBytes();
        const uint64_t below = xoff / WIRE_B; // packets that fill it to XOFF or just below
        for (uint64_t i = 0; i < below; ++i)
        {
            NS_TEST_ASSERT_MSG_EQ(down.IngressAdmit(WIRE_B), true, "taken");
        }
        NS_TEST_ASSERT_MSG_EQ(link->down.sent.size(), 0, "at or below XOFF: no frame");
        NS_TEST_ASSERT_MSG_EQ(down.IngressAdmit(WIRE_B), true, "taken");
        NS_TEST_ASSERT_MSG_EQ(link->down.sent.size(), 1, "past XOFF: one frame");
        NS_TEST_ASSERT_MSG_EQ(link->down.sent[0].quanta, pfc::MAX_QUANTA, "an XOFF");
        NS_TEST_ASSERT_MSG_EQ(down.IsPausingPeer(), true, "the peer is paused");
        // it takes up to XOFF + the headroom (the whole buffer here), and drops past it
        const uint64_t fit = BUFFER_B / WIRE_B;
        for (uint64_t i = below + 1; i < fit; ++i)
        {
            NS_TEST_ASSERT_MSG_EQ(down.IngressAdmit(WIRE_B), true, "within the headroom");
        }
        NS_TEST_ASSERT_MSG_EQ(down.IngressAdmit(WIRE_B), false, "past the headroom: dropped");
        NS_TEST_ASSERT_MSG_EQ(down.GetCounters().ingressDrops, 1, "one drop");
        NS_TEST_ASSERT_MSG_EQ(link->down.sent.size(), 1, "one XOFF however far past it");
        // its egress starts them 10, 20, 30 ... us from now: XON at the release that brings the
        // ingress to XON or below, none before
        const uint64_t xon = down.GetXonBytes();
        const uint64_t releases = fit - xon / WIRE_B; // (fit - k) * WIRE_B <= xon from k on
        for (uint64_t k = 1; k <= releases + 2; ++k)
        {
            down.IngressRelease(WIRE_B, MicroSeconds(10 * k));
        }
        Simulator::Stop(MicroSeconds(10 * (releases + 3))); // past the XON's arrival
        Simulator::Run();
        const int64_t xonAt = 10000000 * static_cast<int64_t>(releases);
        NS_TEST_ASSERT_MSG_EQ(link->down.sent.size(), 2, "one XON");
        NS_TEST_ASSERT_MSG_EQ(link->down.sent[1].ps, xonAt, "at the release that reaches XON");
        NS_TEST_ASSERT_MSG_EQ(link->down.sent[1].quanta, 0, "pause time 0");
        CheckPeer(*link, xonAt);
        Simulator::Destroy();
    }

    /** The peer, up: paused from the XOFF's arrival to the XON's, and asked to drain at each. */
    void CheckPeer(Link& link, int64_t xonAt)
    {
        const int64_t xoffIn = FRAME_TX_PS + DELAY_PS; // sent at 0: its last bit in
        const int64_t xonIn = xonAt + FRAME_TX_PS + DELAY_PS;
        NS_TEST_ASSERT_MSG_EQ(link.up.received.size(), 2, "both frames arrived");
        NS_TEST_ASSERT_MSG_EQ(link.up.received[0].ps, xoffIn, "XOFF: wire time + delay");
        NS_TEST_ASSERT_MSG_EQ(link.up.received[1].ps, xonIn, "XON: wire time + delay");
        NS_TEST_ASSERT_MSG_EQ(link.up.port.drains.size(), 2, "a drain per frame");
        NS_TEST_ASSERT_MSG_EQ(link.up.port.drains[0], xoffIn, "at the XOFF");
        NS_TEST_ASSERT_MSG_EQ(link.up.pfc.GetPausedUntil().GetPicoSeconds(), xonIn, "to the XON");
        const PfcCounters c = link.up.pfc.GetCounters();
        NS_TEST_ASSERT_MSG_EQ(c.pauseRx, 1, "one XOFF in");
        NS_TEST_ASSERT_MSG_EQ(c.resumeRx, 1, "one XON in");
        NS_TEST_ASSERT_MSG_EQ(c.pausedPs, static_cast<uint64_t>(xonIn - xoffIn), "paused");
        const PfcCounters d = link.down.pfc.GetCounters();
        NS_TEST_ASSERT_MSG_EQ(d.pauseTx, 1, "one XOFF out");
        NS_TEST_ASSERT_MSG_EQ(d.resumeTx, 1, "one XON out");
        NS_TEST_ASSERT_MSG_EQ(d.frameBusyPs, 2 * FRAME_TX_PS, "two frames' wire time");
        NS_TEST_ASSERT_MSG_EQ(d.maxIngressBytes, BUFFER_B / WIRE_B * WIRE_B, "the most it held");
    }
};

class PfcRefreshTestCase : public TestCase
{
  public:
    PfcRefreshTestCase()
        : TestCase("PfcPort: an XOFF in force is sent again every half pause time")
    {
    }

  private:
    void DoRun() override
    {
        auto link = MakeLink(Defaults());
        PfcPort& down = link->down.pfc;
        for (uint64_t i = 0; i <= down.GetXoffBytes() / WIRE_B; ++i)
        {
            down.IngressAdmit(WIRE_B); // the last one passes XOFF, at 0
        }
        Simulator::Stop(PicoSeconds(2 * REFRESH_PS + REFRESH_PS / 2));
        Simulator::Run();
        // nothing leaves the ingress: the XOFF at 0, then one each REFRESH_PS (the wire is idle)
        NS_TEST_ASSERT_MSG_EQ(link->down.sent.size(), 3, "the XOFF and two refreshes");
        for (std::size_t i = 0; i < link->down.sent.size(); ++i)
        {
            NS_TEST_ASSERT_MSG_EQ(link->down.sent[i].ps,
                                  static_cast<int64_t>(i) * REFRESH_PS,
                                  "frame " << i);
            NS_TEST_ASSERT_MSG_EQ(link->down.sent[i].quanta, pfc::MAX_QUANTA, "an XOFF");
        }
        const int64_t lastIn = 2 * REFRESH_PS + FRAME_TX_PS + DELAY_PS;
        NS_TEST_ASSERT_MSG_EQ(link->up.received.size(), 3, "each arrived");
        NS_TEST_ASSERT_MSG_EQ(link->up.received[2].ps, lastIn, "the last: wire time + delay");
        NS_TEST_ASSERT_MSG_EQ(link->up.pfc.GetPausedUntil().GetPicoSeconds(),
                              lastIn + PAUSE_PS,
                              "each refresh renews the pause from its arrival");
        // paused without a break from the first arrival (each refresh arrives within the pause)
        const int64_t firstIn = FRAME_TX_PS + DELAY_PS;
        NS_TEST_ASSERT_MSG_EQ(link->up.pfc.GetCounters().pausedPs,
                              static_cast<uint64_t>(Simulator::Now().GetPicoSeconds() - firstIn),
                              "paused since the first XOFF came in");
        Simulator::Destroy();
    }
};

} // namespace

TestCase*
MakePfcRefreshTestCase()
{
    return new PfcRefreshTestCase;
}

TestCase*
MakePfcThresholdsTestCase()
{
    return new PfcThresholdsTestCase;
}

TestCase*
MakePfcXoffXonTestCase()
{
    return new PfcXoffXonTestCase;
}

} // namespace mcsim
} // namespace ns3
