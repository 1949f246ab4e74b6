/*
 * caliper/ConfigManager.h — cali::ConfigManager for perfmark's shim. NOT
 * Caliper's header: the subset of Caliper 2.x's class that Caliper-annotated
 * codes use to take a configuration from their command line (constructors,
 * add, set_default_parameter[_for_config], error, error_msg, start, stop,
 * flush, available_config_specs, get_description_for_spec,
 * get_documentation_for_spec), written inline over the C interface of
 * <caliper/cali-manager.h>, whose comment says what the configurations do.
 * Copies share one manager, as in Caliper.
 * Not provided: config and option specs of your own (add_config_spec,
 * add_option_spec, load), channels (get_channel, get_all_channels, parse),
 * check(), add() with extra key-value pairs.
 */
#ifndef CALI_CONFIGMANAGER_H
#define CALI_CONFIGMANAGER_H

#include "cali-manager.h"

#include <memory>
#include <string>
#include <vector>

namespace cali {

class ConfigManager {
public:
    ConfigManager() : mP(new cali_ConfigManager(), destroy) { cali_ConfigManager_new(mP.get()); }
    explicit ConfigManager(const char *config_string) : ConfigManager() { add(config_string); }

    /* false if this (or an earlier) configuration string had an error */
    bool add(const char *config_string)
    {
        cali_ConfigManager_add(mP.get(), config_string);
        return !error();
    }
    void set_default_parameter(const char *key, const char *value)
    {
        cali_ConfigManager_set_default_parameter(mP.get(), key, value);
    }
    void set_default_parameter_for_config(const char *config, const char *key,
                                          const char *value)
    {
        cali_ConfigManager_set_default_parameter_for_config(mP.get(), config, key, value);
    }
    bool error() const { return cali_ConfigManager_error(mP.get()); }
    std::string error_msg() const
    {
        cali_SHROUD_array msg;
        cali_ConfigManager_error_msg_bufferify(mP.get(), &msg);
        std::string s = msg.addr.ccharp ? std::string(msg.addr.ccharp, msg.elem_len) : std::string();
        cali_SHROUD_memory_destructor(&msg.cxx);
        return s;
    }
    void start() { cali_ConfigManager_start(mP.get()); }
    void stop() { cali_ConfigManager_stop(mP.get()); }
    void flush() { cali_ConfigManager_flush(mP.get()); }

    std::vector<std::string> available_config_specs() const
    {
        std::vector<std::string> names;
        for (int i = 0; perfmark_cali_config_name(i); i++)
            names.push_back(perfmark_cali_config_name(i));
        return names;
    }
    std::string get_description_for_spec(const char *name) const
    {
        const char *doc = perfmark_cali_config_doc(name, 0);
        return doc ? doc : "";
    }
    std::string get_documentation_for_spec(const char *name) const
    {
        const char *doc = perfmark_cali_config_doc(name, 1);
        return std::string(name) + (doc ? std::string("\n ") + doc : std::string(": Not available"));
    }

private:
    static void destroy(cali_ConfigManager *p)
    {
        cali_ConfigManager_delete(p);
        delete p;
    }
    std::shared_ptr<cali_ConfigManager> mP;
};

} /* namespace cali */

#endif /* CALI_CONFIGMANAGER_H */
