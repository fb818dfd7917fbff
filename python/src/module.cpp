// modelcost._modelcost: the C++ engine behind the Python package. `analyze` returns the JSON
// report as plain Python values; `run` runs any command line (diff, llm, calibrate, --html) exactly
// as the `modelcost` binary does; `devices` lists the hardware database. Errors of `analyze` come
// as modelcost.ModelcostError.
#include <Python.h>
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <sstream>

#include "analysis_facade.h"
#include "cli/app.h"
#include "modelcost/errors.h"
#include "modelcost/hardware.h"

namespace nb = nanobind;

namespace {

// UTF-8 that is not valid (odd node names) is replaced, as the JSON writer does.
nb::object python_string(const std::string& text) {
  return nb::steal(PyUnicode_DecodeUTF8(text.data(), static_cast<Py_ssize_t>(text.size()), "replace"));
}

nb::object to_python(const modelcost::Json& value) {
  using Type = modelcost::Json::value_t;
  switch (value.type()) {
    case Type::boolean: return nb::bool_(value.get<bool>());
    case Type::number_integer: return nb::steal(PyLong_FromLongLong(value.get<int64_t>()));
    case Type::number_unsigned: return nb::steal(PyLong_FromUnsignedLongLong(value.get<uint64_t>()));
    case Type::number_float: return nb::float_(value.get<double>());
    case Type::string: return python_string(value.get_ref<const std::string&>());
    case Type::array: {
      nb::list list;
      for (const auto& item : value) list.append(to_python(item));
      return list;
    }
    case Type::object: {
      nb::dict dict;
      for (const auto& item : value.items()) dict[python_string(item.key())] = to_python(item.value());
      return dict;
    }
    default: return nb::none();
  }
}

// modelcost.ModelcostError(message, exit_code), defined in Python (modelcost/errors.py).
void raise_modelcost_error(const modelcost::Error& error) {
  nb::object type = nb::module_::import_("modelcost.errors").attr("ModelcostError");
  nb::object instance = type(python_string(error.what()), static_cast<int>(error.code()));
  PyErr_SetObject(type.ptr(), instance.ptr());
}

nb::object analyze(const std::vector<std::string>& args, const std::string& package_hwdb_dir) {
  modelcost::PythonRequest request{args, package_hwdb_dir};
  modelcost::Json report;
  {
    nb::gil_scoped_release unlocked;  // the analysis touches no Python object
    report = modelcost::analyse_for_python(request);
  }
  return to_python(report);
}

// (exit code, stdout, stderr) of `modelcost ARGS...`.
nb::tuple run(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  int code = 0;
  {
    nb::gil_scoped_release unlocked;
    code = modelcost::run_app(args, out, err);
  }
  return nb::make_tuple(code, python_string(out.str()), python_string(err.str()));
}

modelcost::Json device_json(const modelcost::Device& d) {
  modelcost::Json aliases = d.aliases;
  return {{"id", d.id},
          {"name", d.name},
          {"aliases", aliases},
          {"vendor", d.vendor},
          {"architecture", d.architecture},
          {"kind", d.kind},
          {"memory_gb", d.memory_gb},
          {"memory_bandwidth_gbps", d.memory_bandwidth_gbps},
          {"vector_tflops", d.vector_tflops},
          {"tensor_tflops", d.tensor_tflops},
          {"price_per_hour_usd", d.price_per_hour_usd ? modelcost::Json(*d.price_per_hour_usd) : modelcost::Json(nullptr)},
          {"origin", d.origin}};
}

// Every device of the database (the built-in one, `hwdb_paths`), as --list-gpus lists them.
nb::object devices(const std::vector<std::string>& hwdb_paths) {
  const modelcost::HardwareDb db = modelcost::load_hardware_db(hwdb_paths);
  modelcost::Json list = modelcost::Json::array();
  for (const auto& d : db.devices()) list.push_back(device_json(d));
  return to_python(list);
}

}  // namespace

NB_MODULE(_modelcost, m) {
  nb::register_exception_translator([](const std::exception_ptr& pending, void*) {
    try {
      std::rethrow_exception(pending);
    } catch (const modelcost::Error& error) {
      raise_modelcost_error(error);
    }
  });
  m.def("analyze", &analyze, nb::arg("args"), nb::arg("package_hwdb_dir"),
        "The JSON report of `modelcost ARGS` as Python values (see modelcost.analyze).");
  m.def("run", &run, nb::arg("args"), "(exit code, stdout, stderr) of the command line `modelcost ARGS`.");
  m.def("devices", &devices, nb::arg("hwdb_paths"), "The hardware database's devices as dicts.");
  m.def("builtin_hwdb_dir", &modelcost::builtin_hwdb_dir, "The built-in hwdb/ folder found, or \"\".");
}
