// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "ns3/object-base.h"
#include "ns3/object-factory.h"

#include <string>

namespace ns3
{
namespace mcsim
{

/**
 * @brief Set ns-3 attributes from text, in one call per object or factory.
 *
 * Python hands every attribute of an object as text (mcsim.attributes); C++ turns each into the
 * value its attribute's type takes and lets the attribute's checker judge it. Python so never
 * builds an ns-3 AttributeValue itself, which would make cling compile a call wrapper per value
 * type (and instantiate EnumValue<T> per enum) in every process: the start-up cost of a run.
 *
 * `settings` holds one "Name=text" per line. The text of each value type:
 *   UintegerValue, IntegerValue: a decimal integer ("4096", "-1");
 *   BooleanValue: "true" or "false";
 *   DoubleValue: a decimal number, read to the nearest double ("0.5", "1e-3");
 *   TimeValue: an integer number of picoseconds ("123456");
 *   DataRateValue: an integer number of bits per second ("56000000000");
 *   EnumValue<T>: the name the attribute's checker gives the member ("Lossless").
 * Integers are read exactly (no detour through a double); text that is not wholly a number of
 * the type is refused.
 *
 * Both functions return "" when every attribute was set, else one line about the first one that
 * was not: "<Name>\t<value type name>\t<what its checker accepts>", or "<Name>\t\t" when the type
 * (or its parents) has no such attribute. Attributes before it in `settings` are set.
 */
std::string SetAttributesFromText(ObjectBase& object, const std::string& settings);

/** The same for an ObjectFactory (the objects it creates get the values). */
std::string SetFactoryFromText(ObjectFactory& factory, const std::string& settings);

} // namespace mcsim
} // namespace ns3
