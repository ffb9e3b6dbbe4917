// SPDX-License-Identifier: GPL-2.0-only
// The engine's part of the C ABI (abi.h): loading, objects, attributes, factories, running.
#include "abi.h"

#include "attribute-text.h"

#include "ns3/global-value.h"
#include "ns3/mcsim/counter-table.h"
#include "ns3/mcsim/run-control.h"
#include "ns3/nstime.h"
#include "ns3/object-factory.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/type-id.h"

#include <cstdlib>
#include <cxxabi.h>

namespace ns3
{
namespace mcsim
{
namespace capi
{

std::string&
Text()
{
    thread_local std::string text;
    return text;
}

std::string
TypeName(const std::type_info& type)
{
    int status = 0;
    char* name = ::abi::__cxa_demangle(type.name(), nullptr, nullptr, &status);
    std::string text = status == 0 && name != nullptr ? name : type.name();
    std::free(name);
    return text;
}

ObjectFactory&
FactoryAt(void* factory)
{
    if (factory == nullptr)
    {
        throw std::invalid_argument("a null ObjectFactory");
    }
    return *static_cast<ObjectFactory*>(factory);
}

void*
Handle(Ptr<Object> object)
{
    object->Ref();
    return PeekPointer(object);
}

Constants::Constants(std::initializer_list<std::pair<const char*, uint64_t>> constants)
{
    for (const auto& [name, value] : constants)
    {
        if (!Registry().emplace(name, value).second)
        {
            throw std::invalid_argument(std::string("capi::Constants: ") + name + " given twice");
        }
    }
}

const std::map<std::string, uint64_t>&
Constants::GetAll()
{
    return Registry();
}

std::map<std::string, uint64_t>&
Constants::Registry()
{
    static std::map<std::string, uint64_t> registry;
    return registry;
}

CounterReaders::CounterReaders(std::initializer_list<std::pair<const char*, Reader>> readers)
{
    for (const auto& [table, reader] : readers)
    {
        if (!Registry().emplace(table, reader).second)
        {
            throw std::invalid_argument(std::string("capi::CounterReaders: ") + table +
                                        " given twice");
        }
    }
}

void
CounterReaders::Read(const std::string& table, void* handle, uint64_t* out, uint64_t n)
{
    auto it = Registry().find(table);
    if (it == Registry().end())
    {
        std::string known;
        for (const auto& [name, reader] : Registry())
        {
            known += (known.empty() ? "" : ", ") + name;
        }
        throw std::invalid_argument("CounterReaders: no reader of table " + table +
                                    "; known: " + known);
    }
    it->second(handle, out, n);
}

std::map<std::string, CounterReaders::Reader>&
CounterReaders::Registry()
{
    static std::map<std::string, Reader> registry;
    return registry;
}

} // namespace capi
} // namespace mcsim
} // namespace ns3

using namespace ns3;
using namespace ns3::mcsim;

namespace
{

/** A factory of a registered type; throws std::invalid_argument (not an NS_ASSERT) for another. */
ObjectFactory
FactoryOf(const char* typeName)
{
    TypeId tid;
    if (!TypeId::LookupByNameFailSafe(typeName, &tid))
    {
        throw std::invalid_argument(std::string("no ns-3 type is named ") + typeName);
    }
    ObjectFactory factory;
    factory.SetTypeId(tid);
    return factory;
}

} // namespace

/** The last error message or text result of this thread. */
MCSIM_ABI const char*
mcsim_last_text()
{
    return capi::Text().c_str();
}

/** Bind ns-3's global values mcsim relies on: every run's simulator implementation and scheduler
 * (again after a C++ test run, whose TestCases end with Config::Reset()). */
MCSIM_ABI int64_t
mcsim_bind_globals(const char* simulator, const char* scheduler)
{
    return capi::Do([&] {
        // (ns-3 aborts on an unknown name: look both up first)
        FactoryOf(simulator);
        GlobalValue::Bind("SimulatorImplementationType", StringValue(simulator));
        GlobalValue::Bind("SchedulerType", TypeIdValue(FactoryOf(scheduler).GetTypeId()));
    });
}

/** Once per process, before any Time exists: picosecond resolution (a second call would abort),
 * then the global values. */
MCSIM_ABI int64_t
mcsim_init(const char* simulator, const char* scheduler)
{
    static bool resolved = false;
    if (!resolved)
    {
        Time::SetResolution(Time::PS);
        resolved = true;
    }
    return mcsim_bind_globals(simulator, scheduler);
}

/** The column names of a counter table, one per line, in mcsim_last_text(). */
MCSIM_ABI int64_t
mcsim_counter_names(const char* table)
{
    return capi::Do([&] {
        std::string text;
        for (const auto& name : CounterTable::GetNames(table))
        {
            text += name + "\n";
        }
        capi::Text() = text;
    });
}

/** Counter table `table`'s rows, from the object behind a handle (its reader:
 * capi::CounterReaders), into out[0, n); the columns are mcsim_counter_names(table). */
MCSIM_ABI int64_t
mcsim_counters(void* object, const char* table, uint64_t* out, uint64_t n)
{
    return capi::Do([&] { capi::CounterReaders::Read(table, object, out, n); });
}

/** Every shared constant (capi::Constants), one "NAME VALUE" line each, in mcsim_last_text(). */
MCSIM_ABI int64_t
mcsim_constants()
{
    return capi::Call([] {
        std::string text;
        for (const auto& [name, value] : capi::Constants::GetAll())
        {
            text += name + " " + std::to_string(value) + "\n";
        }
        capi::Text() = text;
        return capi::Constants::GetAll().size();
    });
}

/** A new object of a registered TypeId with default attributes (nullptr: see mcsim_last_text). */
MCSIM_ABI void*
mcsim_create(const char* typeName)
{
    return capi::Make([&] { return capi::Handle(FactoryOf(typeName).Create()); });
}

MCSIM_ABI int64_t
mcsim_dispose(void* object)
{
    return capi::Do([&] { capi::As<Object>(object).Dispose(); });
}

/** Release Python's reference (the handle is invalid after). */
MCSIM_ABI int64_t
mcsim_unref(void* object)
{
    return capi::Do([&] { capi::As<Object>(object).Unref(); });
}

/** Set attributes by name (attribute-text.h): 0, or 1 with the refusal in mcsim_last_text(). */
MCSIM_ABI int64_t
mcsim_set_attributes(void* object, const char* settings)
{
    return capi::Call([&] {
        capi::Text() = SetAttributesFromText(capi::As<Object>(object), settings);
        return capi::Text().empty() ? 0 : 1;
    });
}

/** A new ObjectFactory of a type (freed by mcsim_factory_free). */
MCSIM_ABI void*
mcsim_factory_new(const char* typeName)
{
    return capi::Make([&] { return new ObjectFactory(FactoryOf(typeName)); });
}

/** As mcsim_set_attributes, for a factory. */
MCSIM_ABI int64_t
mcsim_factory_set(void* factory, const char* settings)
{
    return capi::Call([&] {
        capi::Text() = SetFactoryFromText(capi::FactoryAt(factory), settings);
        return capi::Text().empty() ? 0 : 1;
    });
}

MCSIM_ABI void
mcsim_factory_free(void* factory)
{
    delete static_cast<ObjectFactory*>(factory);
}

/** RunControl::RunFor: 1 if no event is left, 0 if the slice's time ran out. */
MCSIM_ABI int64_t
mcsim_run_for(double seconds)
{
    return capi::Call([&] { return RunControl::RunFor(seconds) ? 1 : 0; });
}

MCSIM_ABI int64_t
mcsim_events_run()
{
    return static_cast<int64_t>(RunControl::EventsRun());
}

MCSIM_ABI int64_t
mcsim_now_ps()
{
    return Simulator::Now().GetPicoSeconds();
}

MCSIM_ABI int64_t
mcsim_is_finished()
{
    return Simulator::IsFinished() ? 1 : 0;
}

/** Simulator::Destroy: drop every pending event, so that the process can build another run. */
MCSIM_ABI int64_t
mcsim_destroy()
{
    return capi::Do([] { Simulator::Destroy(); });
}
