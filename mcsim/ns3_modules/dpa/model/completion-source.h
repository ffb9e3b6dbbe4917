// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "ns3/event-impl.h"
#include "ns3/mcsim/completion-processor.h"
#include "ns3/mcsim/event-order.h"
#include "ns3/nstime.h"
#include "ns3/object-factory.h"
#include "ns3/object.h"

#include <cstdint>
#include <vector>

namespace ns3
{
namespace mcsim
{

/**
 * @brief A load generator for a completion processor alone, without a network: it offers count
 * receive completions of bytes each, completion i from QP i mod endpoints with immediate i, one
 * every interval from the start (interval 0: all at once, which saturates the processor), and
 * records when each one was processed. One event per offered completion (one in all if interval
 * is 0).
 */
class CompletionSource : public Object, public CompletionSink
{
  public:
    static TypeId GetTypeId();
    CompletionSource();
    ~CompletionSource() override;

    /** Make the processor from its factory (a bad configuration throws here). */
    void Setup(ObjectFactory processorFactory);
    Ptr<CompletionProcessor> GetProcessor() const;

    /**
     * Offer the completions, starting now.
     * @throws std::invalid_argument without Setup, or for 0 completions or 0 endpoints
     */
    void Start(uint32_t count, uint32_t endpoints, uint32_t bytes, bool staged, Time interval);

    void OnProcessed(const Completion& c) override;

    uint64_t GetOffered() const;   //!< completions submitted so far
    uint64_t GetProcessed() const; //!< completions processed so far
    /** out[i]: when the i-th processed completion (in processing order) was done, in ps. */
    void GetProcessedPs(uint64_t* out, std::size_t n) const;
    /** out[i]: the immediate (= offer index) of the i-th processed completion. */
    void GetProcessedImm(uint32_t* out, std::size_t n) const;

  protected:
    void DoDispose() override;

  private:
    void Offer(); //!< submit the next completion (all of them if the interval is 0)

    Ptr<CompletionProcessor> m_processor;
    uint32_t m_count;
    uint32_t m_endpoints;
    uint32_t m_bytes;
    bool m_staged;
    Time m_interval;
    uint32_t m_offered;
    Ptr<EventImpl> m_offerEvent;
    EventSource m_source;           //!< its order: (TRANSMIT, 0, unit::SOURCE)
    std::vector<uint64_t> m_donePs; //!< in processing order
    std::vector<uint32_t> m_doneImm;
};

} // namespace mcsim
} // namespace ns3
