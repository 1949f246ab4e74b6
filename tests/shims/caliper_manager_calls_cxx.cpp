// cali::ConfigManager's C++ forms the example does not use: the
// constructor taking a configuration, copies sharing one manager (as
// Caliper's do), add()'s result, and the config descriptions.
//
// usage: caliper_manager_calls_cxx
// Prints "add ok", "description ok"; the report goes to stdout once (the
// copy was started and flushed, the original was configured).
#include <caliper/cali.h>
#include <caliper/ConfigManager.h>

#include <iostream>

int main()
{
    cali::ConfigManager mgr("runtime-report(output=stdout)");
    cali::ConfigManager copy = mgr;
    copy.start();
    {
        CALI_CXX_MARK_SCOPE("work");
    }
    cali::ConfigManager other;
    if (other.add("runtime-report") && !other.add("runtime-report(nonsense)") && other.error() &&
        other.error_msg() == "Unknown option: nonsense")
        std::cout << "add ok" << std::endl;
    if (mgr.get_description_for_spec("runtime-report").find("perfmark report") !=
            std::string::npos &&
        mgr.get_documentation_for_spec("bogus") == "bogus: Not available" &&
        mgr.available_config_specs().size() == 1)
        std::cout << "description ok" << std::endl;
    copy.flush();
    return 0;
}
