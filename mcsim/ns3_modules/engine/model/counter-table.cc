// SPDX-License-Identifier: GPL-2.0-only
#include "counter-table.h"

#include <map>
#include <stdexcept>

namespace ns3
{
namespace mcsim
{

namespace
{
/** table -> names; a function-local static, so that registrations from any file's static
 * initialisation find it constructed. */
std::map<std::string, std::vector<std::string>>&
Registry()
{
    static std::map<std::string, std::vector<std::string>> registry;
    return registry;
}
} // namespace

CounterTable::CounterTable(const std::string& table, std::vector<std::string> names)
{
    if (names.empty())
    {
        throw std::invalid_argument("CounterTable: table " + table + " has no column names");
    }
    if (!Registry().emplace(table, std::move(names)).second)
    {
        throw std::invalid_argument("CounterTable: table " + table + " is registered twice");
    }
}

std::vector<std::string>
CounterTable::GetNames(const std::string& table)
{
    auto it = Registry().find(table);
    if (it == Registry().end())
    {
        std::string known;
        for (const auto& name : GetTables())
        {
            known += (known.empty() ? "" : ", ") + name;
        }
        throw std::invalid_argument("CounterTable: no table " + table + "; known: " + known);
    }
    return it->second;
}

std::vector<std::string>
CounterTable::GetTables()
{
    std::vector<std::string> tables;
    for (const auto& [name, names] : Registry())
    {
        tables.push_back(name);
    }
    return tables;
}

} // namespace mcsim
} // namespace ns3
