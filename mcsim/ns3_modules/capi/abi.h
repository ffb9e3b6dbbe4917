// SPDX-License-Identifier: GPL-2.0-only
#pragma once

/**
 * @file
 * The C ABI that Python calls through ctypes (mcsim/native/abi.py declares every function): how a
 * run is built, started and read without cppyy, so that a process that runs a Scenario never
 * imports cppyy nor has cling compile a call wrapper.
 *
 * Rules of every `mcsim_*` function, in abi.cc and each module's `<module>-abi.cc` (all in capi/):
 * - only plain C types cross: integers, doubles, `const char*`, arrays as pointer + count, and
 *   objects as opaque handles (a `void*` to an ns3::Object that Python holds one reference to);
 * - nothing throws across: a C++ exception becomes the return value -1 (or nullptr for a
 *   handle), with its what() in mcsim_last_text(), which Python raises as one McsimError line;
 * - a function that succeeds returns its value (>= 0), or 0 when it has none.
 */

#include "ns3/object-factory.h"
#include "ns3/object.h"

#include <cstddef>
#include <cstdint>
#include <exception>
#include <initializer_list>
#include <map>
#include <stdexcept>
#include <string>
#include <typeinfo>
#include <utility>

#define MCSIM_ABI extern "C" __attribute__((visibility("default")))

namespace ns3
{
namespace mcsim
{
namespace capi
{

/** This thread's last error message or text result (what mcsim_last_text() returns). */
std::string& Text();

/** Run f (returning an integer >= 0); a C++ exception becomes -1 with its message in Text(). */
template <class F>
int64_t
Call(F&& f) noexcept
{
    try
    {
        return static_cast<int64_t>(f());
    }
    catch (const std::exception& e)
    {
        Text() = e.what();
    }
    catch (...)
    {
        Text() = "an unknown C++ exception";
    }
    return -1;
}

/** Run f (which returns nothing): 0, or -1 as Call. */
template <class F>
int64_t
Do(F&& f) noexcept
{
    return Call([&] {
        f();
        return 0;
    });
}

/** The readable name of a C++ type (demangled). */
std::string TypeName(const std::type_info& type);

/** Run f (returning a new pointer); a C++ exception becomes nullptr, its message in Text(). */
template <class F>
void*
Make(F&& f) noexcept
{
    void* made = nullptr;
    Do([&] { made = f(); });
    return made;
}

/** The object behind a handle, as a T; throws std::invalid_argument if it is not one. */
template <class T>
T&
As(void* handle)
{
    auto* object = dynamic_cast<T*>(static_cast<Object*>(handle));
    if (object == nullptr)
    {
        throw std::invalid_argument("a handle is not a " + TypeName(typeid(T)));
    }
    return *object;
}

/** The ObjectFactory behind a factory handle (mcsim_factory_new); throws for a null one. */
ObjectFactory& FactoryAt(void* factory);

/** A new handle to an object: the caller (Python) holds one reference, released by mcsim_unref. */
void* Handle(Ptr<Object> object);

/**
 * @brief The constants Python declares too (mcsim.config: GROUP_FLAG, NO_GROUP, ...), by name:
 * each module's `<module>-abi.cc` registers its own with a static Constants when the library
 * loads; mcsim_constants lists them all and a Python test compares each with its declaration.
 */
class Constants
{
  public:
    /** Register (name, value) pairs; @throws std::invalid_argument for a name given twice. */
    Constants(std::initializer_list<std::pair<const char*, uint64_t>> constants);
    /** Every registered constant, by name. */
    static const std::map<std::string, uint64_t>& GetAll();

  private:
    static std::map<std::string, uint64_t>& Registry();
};

/**
 * @brief The bulk reader of each counter table (ns3::mcsim::CounterTable names its columns), by the
 * table's name: each module's `<module>-abi.cc` registers its readers with a static CounterReaders
 * when the library loads, and mcsim_counters(handle, table, out, n) calls the one named.
 */
class CounterReaders
{
  public:
    /** Write the table's rows, from the object behind a handle, to out[0, n) (throws if the handle
     * is not the table's object or n is not the table's size). */
    using Reader = void (*)(void* handle, uint64_t* out, uint64_t n);

    /** Register (table, reader) pairs; @throws std::invalid_argument for a table given twice. */
    CounterReaders(std::initializer_list<std::pair<const char*, Reader>> readers);
    /**
     * Read `table` from the object behind `handle` into out[0, n).
     * @throws std::invalid_argument for a table no reader registered, naming the known ones
     */
    static void Read(const std::string& table, void* handle, uint64_t* out, uint64_t n);

  private:
    static std::map<std::string, Reader>& Registry();
};

/** A Reader that calls a T's bulk getter (e.g. ReadWith<Fabric, &Fabric::GetPortCounters>). */
template <class T, void (T::*Get)(uint64_t*, std::size_t) const>
void
ReadWith(void* handle, uint64_t* out, uint64_t n)
{
    (As<T>(handle).*Get)(out, n);
}

} // namespace capi
} // namespace mcsim
} // namespace ns3
