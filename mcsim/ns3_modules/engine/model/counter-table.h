// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

/*
 * Counter structs, declared once: an X-macro list gives each uint64_t field as
 *   X(member, initial, "python_name")
 * in order, and MCSIM_COUNTERS(list) expands it, inside the struct, into the fields, their NAMES,
 * their COUNT and CopyTo(out), which writes them in that order. A field and its name cannot drift
 * apart, and Python reads the names from C++ (CounterTable) instead of copying the order by hand.
 */

/** One field of a counter list: a uint64_t member with its initial value. */
#define MCSIM_COUNTER_FIELD(member, initial, name) uint64_t member = initial;
/** The name of a field of a counter list, as Python reads it. */
#define MCSIM_COUNTER_NAME(member, initial, name) name,
/** Write one field of a counter list to *out and advance out. */
#define MCSIM_COUNTER_COPY(member, initial, name) *out++ = member;

/** In a struct: the fields of `list`, their NAMES and COUNT, and CopyTo(out) -> out + COUNT. */
#define MCSIM_COUNTERS(list)                                                                       \
    list(MCSIM_COUNTER_FIELD) static constexpr const char* NAMES[] = {list(MCSIM_COUNTER_NAME)};   \
    static constexpr uint32_t COUNT = sizeof(NAMES) / sizeof(NAMES[0]);                            \
    uint64_t* CopyTo(uint64_t* out) const                                                          \
    {                                                                                              \
        list(MCSIM_COUNTER_COPY) return out;                                                       \
    }

namespace ns3
{
namespace mcsim
{

/**
 * A time that did not happen (a host that received nothing, a work request that never
 * completed), in every counter and time array C++ hands to Python; Python reads it as
 * mcsim.result.NEVER.
 */
constexpr uint64_t NEVER_PS = UINT64_MAX;

/**
 * @brief The column names of the rows each bulk counter reader writes (Fabric::GetPortCounters,
 * RdmaStack::GetHostCounters, ...), by table name: the one place Python reads them from
 * (mcsim.runtime.counter_names).
 *
 * A reader's .cc registers its table when the library loads, with a static CounterTable next to
 * the reader, built from the struct's NAMES (plus any column the reader adds).
 */
class CounterTable
{
  public:
    /**
     * Register `table`'s column names, in the order its reader writes them.
     * @throws std::invalid_argument if `table` is registered already or has no names
     */
    CounterTable(const std::string& table, std::vector<std::string> names);

    /**
     * The column names of `table`, in order.
     * @throws std::invalid_argument for a table nobody registered, naming the known ones
     */
    static std::vector<std::string> GetNames(const std::string& table);
    /** Every registered table, sorted. */
    static std::vector<std::string> GetTables();

    /**
     * The index of the field `name` in a counter struct's NAMES (its column in a reader's row).
     * @throws std::invalid_argument if the struct has no such field
     */
    template <std::size_t N>
    static uint32_t IndexOf(const char* const (&names)[N], const std::string& name)
    {
        for (uint32_t i = 0; i < N; ++i)
        {
            if (name == names[i])
            {
                return i;
            }
        }
        throw std::invalid_argument("CounterTable: no counter " + name);
    }

    /** The columns `before`, then a counter struct's fields (its NAMES), then `after`. */
    template <std::size_t N>
    static std::vector<std::string> Columns(std::vector<std::string> before,
                                            const char* const (&names)[N],
                                            const std::vector<std::string>& after = {})
    {
        before.insert(before.end(), names, names + N);
        before.insert(before.end(), after.begin(), after.end());
        return before;
    }
};

} // namespace mcsim
} // namespace ns3
