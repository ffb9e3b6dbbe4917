// SPDX-License-Identifier: GPL-2.0-only
#include "attribute-text.h"

#include "ns3/boolean.h"
#include "ns3/data-rate.h"
#include "ns3/double.h"
#include "ns3/integer.h"
#include "ns3/nstime.h"
#include "ns3/string.h"
#include "ns3/type-id.h"
#include "ns3/uinteger.h"

#include <charconv>
#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>

namespace ns3
{
namespace mcsim
{

namespace
{

/** `text` as a T if it is wholly one (std::from_chars: exact, no locale, no detour through double).
 */
template <typename T>
std::optional<T>
Parse(std::string_view text)
{
    T value{};
    const char* end = text.data() + text.size();
    auto [ptr, ec] = std::from_chars(text.data(), end, value);
    if (ec != std::errc() || ptr != end || text.empty())
    {
        return std::nullopt;
    }
    return value;
}

/** Whether `name` is one of the members an EnumChecker lists ("Lossless|Lossy"). */
bool
IsMember(const std::string& name, const std::string& members)
{
    std::string_view rest(members);
    while (true)
    {
        auto bar = rest.find('|');
        if (rest.substr(0, bar) == name)
        {
            return true;
        }
        if (bar == std::string_view::npos)
        {
            return false;
        }
        rest = rest.substr(bar + 1);
    }
}

/**
 * The value `text` stands for, as the attribute of `checker` (value type `kind`) takes it;
 * nullptr if it is not one.
 */
Ptr<AttributeValue>
FromText(const AttributeChecker& checker, const std::string& kind, const std::string& text)
{
    if (kind == "ns3::UintegerValue")
    {
        auto v = Parse<uint64_t>(text);
        return v ? Create<UintegerValue>(*v) : nullptr;
    }
    if (kind == "ns3::IntegerValue")
    {
        auto v = Parse<int64_t>(text);
        return v ? Create<IntegerValue>(*v) : nullptr;
    }
    if (kind == "ns3::BooleanValue")
    {
        if (text == "true" || text == "false")
        {
            return Create<BooleanValue>(text == "true");
        }
        return nullptr;
    }
    if (kind == "ns3::DoubleValue")
    {
        auto v = Parse<double>(text);
        return v ? Create<DoubleValue>(*v) : nullptr;
    }
    if (kind == "ns3::TimeValue")
    {
        auto v = Parse<int64_t>(text);
        return v ? Create<TimeValue>(PicoSeconds(*v)) : nullptr;
    }
    if (kind == "ns3::DataRateValue")
    {
        auto v = Parse<uint64_t>(text);
        return v ? Create<DataRateValue>(DataRate(*v)) : nullptr;
    }
    if (kind.rfind("ns3::EnumValue<", 0) == 0 &&
        !IsMember(text, checker.GetUnderlyingTypeInformation()))
    {
        return nullptr; // EnumValue<T> asserts on a name it does not know: never hand it one
    }
    // EnumValue<T> and any other type that reads its own text: the checker makes the value
    return Create<StringValue>(text);
}

/**
 * Apply each "Name=text" line of `settings` to `tid`'s attributes with `set`; the first refusal
 * as SetAttributesFromText describes it.
 */
std::string
Apply(TypeId tid,
      const std::string& settings,
      const std::function<bool(const std::string&, const AttributeValue&)>& set)
{
    std::string_view rest(settings);
    while (!rest.empty())
    {
        auto eol = rest.find('\n');
        std::string_view line = rest.substr(0, eol);
        rest = eol == std::string_view::npos ? std::string_view() : rest.substr(eol + 1);
        if (line.empty())
        {
            continue;
        }
        auto eq = line.find('=');
        std::string name(line.substr(0, eq));
        std::string text(eq == std::string_view::npos ? std::string_view() : line.substr(eq + 1));
        TypeId::AttributeInformation info;
        if (eq == std::string_view::npos || !tid.LookupAttributeByName(name, &info))
        {
            return name + "\t\t";
        }
        std::string kind = info.checker->GetValueTypeName();
        Ptr<AttributeValue> value = FromText(*info.checker, kind, text);
        Ptr<AttributeValue> valid = value ? info.checker->CreateValidValue(*value) : nullptr;
        if (!valid || !set(name, *valid))
        {
            return name + "\t" + kind + "\t" + info.checker->GetUnderlyingTypeInformation();
        }
    }
    return "";
}

} // namespace

std::string
SetAttributesFromText(ObjectBase& object, const std::string& settings)
{
    return Apply(object.GetInstanceTypeId(),
                 settings,
                 [&object](const std::string& name, const AttributeValue& value) {
                     return object.SetAttributeFailSafe(name, value);
                 });
}

std::string
SetFactoryFromText(ObjectFactory& factory, const std::string& settings)
{
    return Apply(factory.GetTypeId(),
                 settings,
                 [&factory](const std::string& name, const AttributeValue& value) {
                     factory.Set(name, value);
                     return true;
                 });
}

} // namespace mcsim
} // namespace ns3
